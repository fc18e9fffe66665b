/** The delivery log of one webhook destination, newest first: time, event, status, attempts, duration, error. */

import { useEffect } from "preact/hooks";
import { api } from "../../api";
import { ErrorText } from "../../components/Field";
import { formatTime, relativeTime } from "../../format";
import { usePolled } from "../../hooks";
import type { WebhookDestination } from "../../types";

/** Refresh while visible: a test or a notification shows up without a reload. */
const DELIVERIES_POLL_MS = 10_000;

/** The section; a change of `refresh` (a test was sent) loads it again at once. */
export function Deliveries({ hook, refresh }: { hook: WebhookDestination; refresh: number }) {
  const log = usePolled(() => api.webhooks.deliveries(hook.id), DELIVERIES_POLL_MS, [hook.id]);
  useEffect(() => {
    if (refresh > 0) void log.reload();
  }, [refresh]);
  const list = log.data ?? [];
  return (
    <section class="card" aria-labelledby="deliveries-title">
      <div class="card-head">
        <h2 id="deliveries-title">Deliveries to {hook.name}</h2>
        <button type="button" class="btn small" disabled={log.loading} onClick={() => log.reload()}>
          Refresh
        </button>
      </div>
      <ErrorText error={log.error} />
      {log.data && list.length === 0 && <p class="muted">Nothing sent to this destination yet.</p>}
      {list.length > 0 && (
        <div class="table-wrap">
          <table class="table stack">
            <caption class="sr-only">Deliveries to {hook.name}</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Attempts
                </th>
                <th scope="col" class="num">
                  Duration
                </th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {list.map((d) => {
                const ok = d.status !== null && d.status >= 200 && d.status < 300 && !d.error;
                return (
                  <tr key={d.id}>
                    <th scope="row" title={formatTime(d.created_at)}>
                      {relativeTime(d.created_at)}
                    </th>
                    <td data-label="Event">{d.event}</td>
                    <td data-label="Status">
                      <span class={`badge ${ok ? "ok" : "bad"}`}>{d.status ?? "no response"}</span>
                    </td>
                    <td data-label="Attempts" class="num">
                      {d.attempts ?? 1}
                    </td>
                    <td data-label="Duration" class="num">
                      {Math.round(d.duration_ms)} ms
                    </td>
                    <td data-label="Error">{d.error ?? <span class="muted">none</span>}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
