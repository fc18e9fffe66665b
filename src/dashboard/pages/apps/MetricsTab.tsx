/**
 * Container metrics of one app over a range (in the URL: `?tab=metrics&range=24h`): CPU per container, memory used
 * against its limit per container, and the app's network and block I/O rates. Refreshed every 10 s on the last hour
 * (the collector's pace), every minute on longer ranges, and not at all while the page is hidden.
 */
import { useMemo } from "preact/hooks";
import { api } from "../../api";
import { appCharts } from "../../charts";
import { ErrorText } from "../../components/Field";
import { MetricsChart } from "../../components/MetricsChart";
import { formatTime } from "../../format";
import { usePolled } from "../../hooks";
import { METRIC_RANGE_WORDS, METRIC_RANGES, type MetricRange, metricsPollMs, parseMetricRange, stepWords } from "../../metrics";
import { navigate, useLocation } from "../../router";
import type { AppView } from "../../types";

function RangePicker({ slug, range }: { slug: string; range: MetricRange }) {
  return (
    <fieldset class="segmented">
      <legend class="sr-only">Range</legend>
      {METRIC_RANGES.map((r) => (
        <button
          key={r}
          type="button"
          class="btn small"
          aria-pressed={r === range}
          onClick={() => navigate(`/apps/${encodeURIComponent(slug)}?tab=metrics&range=${r}`, { replace: true })}
        >
          {r}
        </button>
      ))}
    </fieldset>
  );
}

/** The tab. */
export function MetricsTab({ app }: { app: AppView }) {
  const slug = app.slug;
  const range = parseMetricRange(useLocation().query.get("range"));
  const poll = metricsPollMs(range);
  const metrics = usePolled(() => api.apps.metrics(slug, range), poll, [slug, range]);
  const m = metrics.data?.range === range ? metrics.data : undefined;
  const charts = useMemo(() => (m ? appCharts(m, slug) : null), [m, slug]);
  const from = m ? Math.floor(Date.parse(m.from) / 1000) : 0;
  const to = m ? Math.ceil(Date.parse(m.to) / 1000) : 0;

  return (
    <>
      <div class="traffic-head">
        <RangePicker slug={slug} range={range} />
        <p class="muted small" aria-live="polite">
          {m ? (
            <>
              Updated <time dateTime={m.to}>{formatTime(m.to)}</time> · {stepWords(m.step_seconds)} samples · refreshes every{" "}
              {poll / 1000} s
            </>
          ) : metrics.loading ? (
            "Loading…"
          ) : null}
        </p>
      </div>
      <ErrorText error={metrics.error} />
      {m && !charts && (
        <section class="card empty-state">
          <h2>No metrics in the last {METRIC_RANGE_WORDS[range]}</h2>
          <p class="muted">
            {app.status === "running" || app.status === "degraded"
              ? "Samples of CPU, memory, network and disk are taken every 10 s while containers run; the first appear here within seconds."
              : "Samples are taken every 10 s while the app's containers run. Start the app, or pick a longer range to look further back."}
          </p>
        </section>
      )}
      {charts && (
        <div class="chart-grid-2">
          {charts.map((c) => (
            <section key={c.id} class="card" aria-labelledby={`metrics-${c.id}`}>
              <h2 id={`metrics-${c.id}`}>{c.title}</h2>
              <MetricsChart label={c.label} data={c.data} lines={c.lines} from={from} to={to} format={c.format} yMax={c.yMax} />
            </section>
          ))}
        </div>
      )}
    </>
  );
}
