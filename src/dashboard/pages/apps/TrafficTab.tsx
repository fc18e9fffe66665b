/**
 * Requests through the proxy to this app over a range (in the URL: `?tab=traffic&range=24h`): headline numbers,
 * requests per second and latency charts, the status-class breakdown and the top paths. Refreshed every 10 s while
 * the page is visible.
 */
import { api } from "../../api";
import { ErrorText } from "../../components/Field";
import { LineChart } from "../../components/LineChart";
import { formatTime } from "../../format";
import { usePolled } from "../../hooks";
import { navigate, useLocation } from "../../router";
import type { AppView, RequestStats } from "../../types";
import { StatusBreakdown, TopPaths } from "./TrafficTables";
import {
  errorRate,
  fillSeries,
  formatBytes,
  formatMs,
  formatNumber,
  formatPercent,
  parseRange,
  RANGE_WORDS,
  RANGES,
  type Range,
  TRAFFIC_POLL_MS,
} from "./traffic";

function RangePicker({ slug, range }: { slug: string; range: Range }) {
  return (
    <fieldset class="segmented">
      <legend class="sr-only">Range</legend>
      {RANGES.map((r) => (
        <button
          key={r}
          type="button"
          class="btn small"
          aria-pressed={r === range}
          onClick={() => navigate(`/apps/${encodeURIComponent(slug)}?tab=traffic&range=${r}`, { replace: true })}
        >
          {r}
        </button>
      ))}
    </fieldset>
  );
}

function Headline({ s }: { s: RequestStats }) {
  const rate = errorRate(s);
  const items: Array<[string, string, string?]> = [
    ["Requests", formatNumber(s.requests)],
    ["Requests/s", formatNumber(s.rps)],
    ["p50", formatMs(s.p50_ms)],
    ["p95", formatMs(s.p95_ms)],
    ["p99", formatMs(s.p99_ms)],
    ["Error rate (5xx)", formatPercent(rate), rate > 0 ? "bad" : undefined],
    ["Sent", formatBytes(s.bytes)],
  ];
  return (
    <dl class="stat-tiles" aria-label="Traffic summary">
      {items.map(([term, value, tone]) => (
        <div key={term} class={`stat ${tone ?? ""}`}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function Charts({ s, range }: { s: RequestStats; range: Range }) {
  const f = fillSeries(s);
  const peak = Math.max(0, ...f.rps);
  return (
    <div class="chart-grid-2">
      <section class="card" aria-labelledby="rps-title">
        <h2 id="rps-title">Requests per second</h2>
        <LineChart
          label={`Requests per second over the last ${RANGE_WORDS[range]}: average ${formatNumber(s.rps)}, peak ${formatNumber(peak)}`}
          times={f.t}
          from={f.from}
          to={f.to}
          format={formatNumber}
          series={[{ label: "req/s", values: f.rps, tone: 1 }]}
        />
      </section>
      <section class="card" aria-labelledby="latency-title">
        <h2 id="latency-title">Latency</h2>
        <LineChart
          label={`Latency over the last ${RANGE_WORDS[range]}: p50 ${formatMs(s.p50_ms)}, p95 ${formatMs(s.p95_ms)}, p99 ${formatMs(s.p99_ms)}`}
          times={f.t}
          from={f.from}
          to={f.to}
          format={formatMs}
          series={[
            { label: "p50", values: f.p50, tone: 1 },
            { label: "p95", values: f.p95, tone: 2 },
            { label: "p99", values: f.p99, tone: 3 },
          ]}
        />
      </section>
    </div>
  );
}

/** The tab. */
export function TrafficTab({ app }: { app: AppView }) {
  const slug = app.slug;
  const range = parseRange(useLocation().query.get("range"));
  const stats = usePolled(() => api.apps.requestStats(slug, range), TRAFFIC_POLL_MS, [slug, range]);
  const s = stats.data?.range === range ? stats.data : undefined;

  return (
    <>
      <div class="traffic-head">
        <RangePicker slug={slug} range={range} />
        <p class="muted small" aria-live="polite">
          {s ? (
            <>
              Updated <time dateTime={s.to}>{formatTime(s.to)}</time> · refreshes every {TRAFFIC_POLL_MS / 1000} s
            </>
          ) : stats.loading ? (
            "Loading…"
          ) : null}
        </p>
      </div>
      <ErrorText error={stats.error} />
      {s && s.requests === 0 && (
        <section class="card empty-state">
          <h2>No traffic in the last {RANGE_WORDS[range]}</h2>
          <p class="muted">
            {app.endpoints.length === 0
              ? "This app has no endpoints, so the proxy sends it nothing. Give a service a sundeck.domain label to route requests to it."
              : "Requests through the proxy to this app's hosts appear here within seconds. Pick a longer range to look further back."}
          </p>
        </section>
      )}
      {s && s.requests > 0 && (
        <>
          <Headline s={s} />
          <Charts s={s} range={range} />
          <div class="grid">
            <TopPaths s={s} />
            <StatusBreakdown s={s} />
          </div>
        </>
      )}
    </>
  );
}
