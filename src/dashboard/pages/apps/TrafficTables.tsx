/** The Traffic tab's breakdowns: answers by status class as bars (codes listed below), and the most requested paths. */
import type { RequestStats } from "../../types";
import { formatNumber, formatPercent, statusBars } from "./traffic";

/** Bars of 2xx to 5xx with counts and shares, and the individual codes. */
export function StatusBreakdown({ s }: { s: RequestStats }) {
  const bars = statusBars(s);
  const codes = Object.entries(s.status_codes).sort(([a], [b]) => a.localeCompare(b));
  return (
    <section class="card" aria-labelledby="status-title">
      <h2 id="status-title">Status classes</h2>
      <ul class="bars" aria-label="Status classes">
        {bars.map((b) => (
          <li key={b.cls} class={`bar-row class-${b.cls}`}>
            <span class="bar-label">{b.cls}</span>
            <span class="bar-track" aria-hidden="true">
              <span class="bar-fill" style={{ width: `${Math.max(b.count > 0 ? 1 : 0, b.share * 100)}%` }} />
            </span>
            <span class="bar-value">
              {formatNumber(b.count)} <span class="muted">({formatPercent(b.share)})</span>
            </span>
          </li>
        ))}
      </ul>
      {codes.length > 0 && (
        <p class="muted small status-codes">
          Codes:{" "}
          {codes.map(([code, n], i) => (
            <span key={code}>
              {i > 0 && ", "}
              <code>{code}</code> × {formatNumber(n)}
            </span>
          ))}
        </p>
      )}
    </section>
  );
}

/** The most requested paths (ids normalised by the server), with their share. */
export function TopPaths({ s }: { s: RequestStats }) {
  return (
    <section class="card" aria-labelledby="paths-title">
      <h2 id="paths-title">Top paths</h2>
      {s.top_paths.length === 0 ? (
        <p class="muted">No paths recorded.</p>
      ) : (
        <div class="table-wrap">
          <table class="table stack" aria-label="Top paths">
            <thead>
              <tr>
                <th scope="col">Path</th>
                <th scope="col" class="num">
                  Requests
                </th>
                <th scope="col" class="num">
                  Share
                </th>
              </tr>
            </thead>
            <tbody>
              {s.top_paths.map((p) => (
                <tr key={p.path}>
                  <th scope="row" class="mono path-cell">
                    {p.path}
                  </th>
                  <td data-label="Requests" class="num">
                    {formatNumber(p.count)}
                  </td>
                  <td data-label="Share" class="num">
                    {formatPercent(s.requests > 0 ? p.count / s.requests : 0)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
