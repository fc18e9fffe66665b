/**
 * The host's last hour on the overview, compact: CPU, memory, free space of the data and Docker disks, network.
 * Refreshed every 10 s while the page is visible; a server without host metrics (or a role not shown them) gets a
 * short line instead of charts.
 */
import { useMemo } from "preact/hooks";
import { api } from "../api";
import { diskWords, hostCharts } from "../charts";
import { MetricsChart } from "../components/MetricsChart";
import { formatTime } from "../format";
import { usePolled } from "../hooks";
import { metricsPollMs } from "../metrics";

/** The card. */
export function HostCharts() {
  const m = usePolled(() => api.systemMetrics("1h"), metricsPollMs("1h"));
  const d = m.data;
  const charts = useMemo(() => (d ? hostCharts(d) : null), [d]);
  const from = d ? Math.floor(Date.parse(d.from) / 1000) : 0;
  const to = d ? Math.ceil(Date.parse(d.to) / 1000) : 0;
  return (
    <section class="card host-charts" aria-labelledby="host-title">
      <div class="card-head">
        <h2 id="host-title">Host, last hour</h2>
        {d && (
          <p class="muted small">
            Updated <time dateTime={d.to}>{formatTime(d.to)}</time>
          </p>
        )}
      </div>
      {m.error && !d && <p class="muted">Host metrics are not available: {m.error}</p>}
      {d && !charts && <p class="muted">No host samples yet: they are taken every 10 s and appear here within seconds.</p>}
      {d && charts && (
        <>
          <div class="host-grid">
            {charts.map((c) => (
              <div key={c.id} class="host-chart">
                <h3>{c.title}</h3>
                <MetricsChart
                  label={c.label}
                  data={c.data}
                  lines={c.lines}
                  from={from}
                  to={to}
                  format={c.format}
                  yMax={c.yMax}
                  height={120}
                />
              </div>
            ))}
          </div>
          <p class="muted small">
            Data disk: {diskWords(d, "disk_free_bytes", "disk_total_bytes")} · Docker disk:{" "}
            {diskWords(d, "docker_disk_free_bytes", "docker_disk_total_bytes")}
          </p>
        </>
      )}
    </section>
  );
}
