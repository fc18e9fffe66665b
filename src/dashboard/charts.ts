/**
 * The charts of the metrics answers, built as data (pure, so tested without a browser): an app's CPU and memory per
 * container and its network and block I/O in all; the host's CPU, memory, disk space and network.
 */
import {
  alignColumns,
  type ChartLine,
  type ChartSpec,
  containerLabel,
  formatLoad,
  formatPct,
  formatRate,
  formatSize,
  hasValues,
  lastValue,
  peakValue,
  type Samples,
  samplesOf,
  sumSamples,
} from "./metrics";
import type { AppMetrics, SystemMetrics, SystemPoint } from "./types";

const tone = (i: number) => (i % 6) + 1;
const fmtOr = (v: number | null, f: (n: number) => string) => (v === null ? "none" : f(v));

/** "web-1 now 12%, peak 80%; web-2 now ..." for a chart's accessible name. */
function summary(ss: Samples[], labels: string[], f: (n: number) => string): string {
  return ss.map((s, i) => `${labels[i]} now ${fmtOr(lastValue(s), f)}, peak ${fmtOr(peakValue(s), f)}`).join("; ");
}

/** The four charts of an app's answer, or null when it holds no sample at all (the empty state). */
export function appCharts(m: AppMetrics, slug: string): ChartSpec[] | null {
  const cs = m.containers;
  const step = m.step_seconds;
  const names = cs.map((c) => containerLabel(c.name || c.service, slug));
  const cpu = cs.map((c) => samplesOf(c.points, "cpu_pct"));
  const mem = cs.map((c) => samplesOf(c.points, "mem_bytes"));
  const limits = cs.map((c) => samplesOf(c.points, "mem_limit_bytes"));
  const rx = sumSamples(cs.map((c) => samplesOf(c.points, "net_rx_bps")));
  const tx = sumSamples(cs.map((c) => samplesOf(c.points, "net_tx_bps")));
  const rd = sumSamples(cs.map((c) => samplesOf(c.points, "blk_read_bps")));
  const wr = sumSamples(cs.map((c) => samplesOf(c.points, "blk_write_bps")));
  if (!hasValues([...cpu, ...mem, rx, tx, rd, wr])) return null;

  // each container's limit dashed in its own colour, when it has one
  const memSeries: Samples[] = [];
  const memLines: ChartLine[] = [];
  cs.forEach((_, i) => {
    memSeries.push(mem[i]);
    memLines.push({ label: names[i], tone: tone(i) });
    if (hasValues([limits[i]])) {
      memSeries.push(limits[i]);
      memLines.push({ label: `${names[i]} limit`, tone: tone(i), dash: true });
    }
  });

  return [
    {
      id: "cpu",
      title: "CPU (% of one core)",
      label: `CPU per container: ${summary(cpu, names, formatPct)}`,
      data: alignColumns(cpu, step),
      lines: names.map((n, i) => ({ label: n, tone: tone(i) })),
      format: formatPct,
    },
    {
      id: "memory",
      title: "Memory (used and limit)",
      label: `Memory per container: ${summary(mem, names, formatSize)}`,
      data: alignColumns(memSeries, step),
      lines: memLines,
      format: formatSize,
    },
    {
      id: "network",
      title: "Network",
      label: `Network of the app: ${summary([rx, tx], ["received", "sent"], formatRate)}`,
      data: alignColumns([rx, tx], step),
      lines: [
        { label: "received", tone: 1 },
        { label: "sent", tone: 2 },
      ],
      format: formatRate,
    },
    {
      id: "disk",
      title: "Disk I/O",
      label: `Block I/O of the app: ${summary([rd, wr], ["read", "written"], formatRate)}`,
      data: alignColumns([rd, wr], step),
      lines: [
        { label: "read", tone: 1 },
        { label: "written", tone: 2 },
      ],
      format: formatRate,
    },
  ];
}

type HostField = keyof Omit<SystemPoint, "t">;

const hostSamples = (m: SystemMetrics, f: HostField): Samples => m.points.map((p) => [Date.parse(p.t), p[f]]);

/** Percent free of a disk per point (null where either number is missing or the total is 0). */
function freePct(m: SystemMetrics, free: HostField, total: HostField): Samples {
  return m.points.map((p) => {
    const f = p[free];
    const t = p[total];
    return [Date.parse(p.t), f === null || t === null || t <= 0 ? null : (f / t) * 100];
  });
}

/** A disk's latest state in words: "12 GiB free of 50 GiB (24%)". */
export function diskWords(m: SystemMetrics, free: HostField, total: HostField): string {
  for (let i = m.points.length - 1; i >= 0; i--) {
    const f = m.points[i][free];
    const t = m.points[i][total];
    if (f !== null && t !== null && t > 0) return `${formatSize(f)} free of ${formatSize(t)} (${formatPct((f / t) * 100)})`;
  }
  return "unknown";
}

/** The host's four compact charts, or null when the answer holds no sample. */
export function hostCharts(m: SystemMetrics): ChartSpec[] | null {
  const step = m.step_seconds;
  const cpu = hostSamples(m, "cpu_pct");
  const used = hostSamples(m, "mem_used_bytes");
  const total = hostSamples(m, "mem_total_bytes");
  const data = freePct(m, "disk_free_bytes", "disk_total_bytes");
  const docker = freePct(m, "docker_disk_free_bytes", "docker_disk_total_bytes");
  const rx = hostSamples(m, "net_rx_bps");
  const tx = hostSamples(m, "net_tx_bps");
  if (!hasValues([cpu, used, data, docker, rx, tx])) return null;
  const load = lastValue(hostSamples(m, "load1"));
  return [
    {
      id: "cpu",
      title: "CPU",
      label: `Host CPU: ${summary([cpu], ["busy"], formatPct)}${load === null ? "" : `; load ${formatLoad(load)}`}`,
      data: alignColumns([cpu], step),
      lines: [{ label: "busy", tone: 1 }],
      format: formatPct,
    },
    {
      id: "memory",
      title: "Memory",
      label: `Host memory: ${summary([used], ["used"], formatSize)} of ${fmtOr(lastValue(total), formatSize)}`,
      data: alignColumns([used, total], step),
      lines: [
        { label: "used", tone: 1 },
        { label: "total", tone: 1, dash: true },
      ],
      format: formatSize,
    },
    {
      id: "disk",
      title: "Disk free",
      label: `Disk free: data ${diskWords(m, "disk_free_bytes", "disk_total_bytes")}; Docker ${diskWords(m, "docker_disk_free_bytes", "docker_disk_total_bytes")}`,
      data: alignColumns([data, docker], step),
      lines: [
        { label: "data", tone: 1 },
        { label: "docker", tone: 2 },
      ],
      format: formatPct,
      yMax: 100,
    },
    {
      id: "network",
      title: "Network",
      label: `Host network: ${summary([rx, tx], ["received", "sent"], formatRate)}`,
      data: alignColumns([rx, tx], step),
      lines: [
        { label: "received", tone: 1 },
        { label: "sent", tone: 2 },
      ],
      format: formatRate,
    },
  ];
}
