/**
 * The Prometheus text exposition (format 0.0.4) of what Sundeck knows: the last collection tick (containers and
 * host), the proxy's request counters since start, deploys per app and status, and firing alerts. Names follow the
 * Prometheus naming practice: a `sundeck_` prefix, base units (seconds, bytes, ratios 0..1 rather than percents),
 * `_total` on counters. Each family is written once with its HELP and TYPE lines; a value the source could not
 * give (null) is left out rather than sent as 0.
 */
import type { Db } from "../../db";
import type { Clock } from "../../lib/time";
import type { MetricsReader, Tick } from "./samples";
import { type AppTotals, LATENCY_BOUNDS_S, TOTAL_CLASSES } from "./totals";

/** The Content-Type of the text format. */
export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

type Labels = Record<string, string>;
type Sample = readonly [Labels, number | null | undefined];

/** Deploys of one app in one status. */
export interface DeployCount {
  app: string;
  status: string;
  count: number;
}

/** One firing alert: its rule and subject (an app, a container, the host...). */
export interface FiringAlert {
  ruleId: number;
  rule: string;
  kind: string;
  /** The rule's app, "" for a global rule. */
  app: string;
  subject: string;
}

/** Everything one exposition is rendered from. */
export interface ExpositionInput {
  tick: Tick | null;
  requests: Iterable<[string, AppTotals]>;
  deploys: readonly DeployCount[];
  /** Apps not removed. */
  apps: number;
  alerts: readonly FiringAlert[];
  version: string;
}

/** A label value with backslash, double quote and line feed escaped. */
export function escapeLabel(v: string): string {
  return v.replace(/[\\"\n]/g, (c) => (c === "\n" ? "\\n" : `\\${c}`));
}

/** A HELP text with backslash and line feed escaped. */
function escapeHelp(v: string): string {
  return v.replace(/[\\\n]/g, (c) => (c === "\n" ? "\\n" : "\\\\"));
}

/** A sample value in the text format (`+Inf`, `-Inf`, `NaN` spelled as Prometheus reads them). */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Number.POSITIVE_INFINITY) return "+Inf";
  if (v === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(v);
}

function labelText(l: Labels): string {
  const parts: string[] = [];
  for (const k in l) parts.push(`${k}="${escapeLabel(l[k])}"`);
  return parts.length ? `{${parts.join(",")}}` : "";
}

/** Builds the text, one family at a time; a family name or a series repeated is a bug and throws. */
class Writer {
  private readonly out: string[] = [];
  private readonly families = new Set<string>();

  private head(name: string, type: string, help: string): void {
    if (this.families.has(name)) throw new Error(`metric family ${name} written twice`);
    this.families.add(name);
    this.out.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`);
  }

  private samples(name: string, type: "gauge" | "counter", help: string, samples: readonly Sample[]): void {
    const present = samples.filter((s): s is readonly [Labels, number] => typeof s[1] === "number");
    if (present.length === 0) return;
    this.head(name, type, help);
    const seen = new Set<string>();
    for (const [labels, value] of present) {
      const l = labelText(labels);
      if (seen.has(l)) throw new Error(`series ${name}${l} written twice`);
      seen.add(l);
      this.out.push(`${name}${l} ${formatValue(value)}`);
    }
  }

  gauge(name: string, help: string, samples: readonly Sample[]): void {
    this.samples(name, "gauge", help, samples);
  }

  counter(name: string, help: string, samples: readonly Sample[]): void {
    this.samples(name, "counter", help, samples);
  }

  /** `counts` per bucket, not cumulative, the last one past every bound; `sum` in the family's unit. */
  histogram(
    name: string,
    help: string,
    bounds: readonly number[],
    series: ReadonlyArray<{ labels: Labels; counts: ArrayLike<number>; sum: number }>,
  ): void {
    if (series.length === 0) return;
    this.head(name, "histogram", help);
    for (const s of series) {
      let cumulative = 0;
      for (let i = 0; i <= bounds.length; i++) {
        cumulative += s.counts[i] ?? 0;
        const le = i < bounds.length ? formatValue(bounds[i]) : "+Inf";
        this.out.push(`${name}_bucket${labelText({ ...s.labels, le })} ${cumulative}`);
      }
      const l = labelText(s.labels);
      this.out.push(`${name}_sum${l} ${formatValue(s.sum)}`, `${name}_count${l} ${cumulative}`);
    }
  }

  text(): string {
    return this.out.length ? `${this.out.join("\n")}\n` : "";
  }
}

const byKey =
  <T>(key: (x: T) => string) =>
  (a: T, b: T) =>
    key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
const ratio = (pct: number | null) => (pct === null ? null : pct / 100);

/** Render the exposition text. */
export function renderExposition(input: ExpositionInput): string {
  const w = new Writer();
  w.gauge("sundeck_build_info", "Sundeck's version; always 1.", [[{ version: input.version }, 1]]);
  w.gauge("sundeck_apps", "Apps known to Sundeck (removed ones not counted).", [[{}, input.apps]]);
  writeContainers(w, input.tick);
  writeHost(w, input.tick);
  writeRequests(w, input.requests);
  w.counter(
    "sundeck_deploys_total",
    "Deploys and lifecycle actions recorded per app and status.",
    [...input.deploys].sort(byKey((d) => `${d.app}\0${d.status}`)).map((d) => [{ app: d.app, status: d.status }, d.count]),
  );
  w.gauge(
    "sundeck_alerts_firing",
    "Alerts firing now: 1 per rule and subject.",
    input.alerts.map((a) => [{ app: a.app, kind: a.kind, rule: a.rule, rule_id: String(a.ruleId), subject: a.subject }, 1]),
  );
  return w.text();
}

function writeContainers(w: Writer, tick: Tick | null): void {
  const cs = [...(tick?.containers ?? [])].sort(byKey((c) => `${c.app}\0${c.service}\0${c.name}`));
  const series = (f: (c: (typeof cs)[number]) => number | null): Sample[] =>
    cs.map((c) => [{ app: c.app, service: c.service, container: c.name }, f(c)]);
  if (tick) w.gauge("sundeck_metrics_last_collection_timestamp_seconds", "When the last collection ran.", [[{}, tick.t / 1000]]);
  w.gauge(
    "sundeck_container_running",
    "1 when the container runs, 0 otherwise.",
    series((c) => (c.running ? 1 : 0)),
  );
  w.gauge(
    "sundeck_container_cpu_usage_ratio",
    "CPU used over the last collection interval, in cores (1 = one core busy).",
    series((c) => ratio(c.cpuPct)),
  );
  w.gauge(
    "sundeck_container_cpu_limit_usage_ratio",
    "CPU used as a ratio of the container's CPU limit (containers with a limit only).",
    series((c) => ratio(c.cpuLimitPct)),
  );
  w.gauge(
    "sundeck_container_memory_usage_bytes",
    "Memory used by the container.",
    series((c) => c.memBytes),
  );
  w.gauge(
    "sundeck_container_memory_limit_bytes",
    "Memory limit of the container (containers with a limit only).",
    series((c) => c.memLimitBytes),
  );
  w.gauge(
    "sundeck_container_network_receive_bytes_per_second",
    "Bytes received per second.",
    series((c) => c.netRxBps),
  );
  w.gauge(
    "sundeck_container_network_transmit_bytes_per_second",
    "Bytes sent per second.",
    series((c) => c.netTxBps),
  );
  w.gauge(
    "sundeck_container_block_read_bytes_per_second",
    "Bytes read from block devices per second.",
    series((c) => c.blkReadBps),
  );
  w.gauge(
    "sundeck_container_block_write_bytes_per_second",
    "Bytes written to block devices per second.",
    series((c) => c.blkWriteBps),
  );
  w.counter(
    "sundeck_container_restarts_total",
    "Restarts of the container counted by the engine.",
    series((c) => c.restarts),
  );
}

function writeHost(w: Writer, tick: Tick | null): void {
  const h = tick?.host;
  const one = (v: number | null | undefined): Sample[] => [[{}, v]];
  w.gauge("sundeck_host_cpu_usage_ratio", "Host CPU busy, as a ratio of all cores (0 to 1).", one(ratio(h?.cpuPct ?? null)));
  w.gauge("sundeck_host_load1", "Host load average over 1 minute.", one(h?.load1));
  w.gauge("sundeck_host_load5", "Host load average over 5 minutes.", one(h?.load5));
  w.gauge("sundeck_host_load15", "Host load average over 15 minutes.", one(h?.load15));
  w.gauge("sundeck_host_memory_used_bytes", "Host memory in use.", one(h?.memUsedBytes));
  w.gauge("sundeck_host_memory_total_bytes", "Host memory in all.", one(h?.memTotalBytes));
  w.gauge("sundeck_host_swap_used_bytes", "Host swap in use.", one(h?.swapUsedBytes));
  w.gauge("sundeck_host_swap_total_bytes", "Host swap in all.", one(h?.swapTotalBytes));
  w.gauge(
    "sundeck_host_disk_free_bytes",
    "Free bytes on the disk of Sundeck's data dir (mount=data) and Docker's root (mount=docker).",
    [
      [{ mount: "data" }, h?.diskFreeBytes],
      [{ mount: "docker" }, h?.dockerDiskFreeBytes],
    ],
  );
  w.gauge(
    "sundeck_host_disk_total_bytes",
    "Size of the disk of Sundeck's data dir (mount=data) and Docker's root (mount=docker).",
    [
      [{ mount: "data" }, h?.diskTotalBytes],
      [{ mount: "docker" }, h?.dockerDiskTotalBytes],
    ],
  );
  w.gauge("sundeck_host_network_receive_bytes_per_second", "Bytes the host received per second.", one(h?.netRxBps));
  w.gauge("sundeck_host_network_transmit_bytes_per_second", "Bytes the host sent per second.", one(h?.netTxBps));
}

function writeRequests(w: Writer, requests: Iterable<[string, AppTotals]>): void {
  const apps = [...requests].sort(byKey(([app]) => app));
  const classes: Sample[] = apps.flatMap(([app, t]) =>
    TOTAL_CLASSES.map((cls, i): Sample => [{ app, class: cls }, t.classes[i]]),
  );
  w.counter("sundeck_http_requests_total", "Requests the proxy answered per app and status class.", classes);
  w.histogram(
    "sundeck_http_request_duration_seconds",
    "Time from the request to the upstream's response headers.",
    LATENCY_BOUNDS_S,
    apps.map(([app, t]) => ({ labels: { app }, counts: t.buckets, sum: t.sumMs / 1000 })),
  );
  w.counter(
    "sundeck_http_response_bytes_total",
    "Response body bytes the proxy sent per app (when their size was known).",
    apps.map(([app, t]) => [{ app }, t.bytes]),
  );
}

/** What the exposition reads. */
export interface ExpositionDeps {
  db: Db;
  clock: Clock;
  /** The metrics service, or null while there is none (no container or host series then). */
  metrics: () => MetricsReader | null;
  requests: () => Iterable<[string, AppTotals]>;
  version: string;
  /** How long database figures are reused between scrapes, ms (5 s). */
  cacheMs?: number;
}

interface DbFigures {
  at: number;
  deploys: DeployCount[];
  apps: number;
  alerts: FiringAlert[];
}

/** The exposition over the live sources; database figures are cached for a few seconds. */
export function createExposition(d: ExpositionDeps): { render(): string } {
  const cacheMs = d.cacheMs ?? 5000;
  const deploysQ = d.db.sqlite.query<DeployCount, []>(
    `SELECT a.slug AS app, d.status AS status, COUNT(*) AS count FROM deploys d JOIN apps a ON a.id = d.app_id
     WHERE a.removed_at IS NULL GROUP BY a.slug, d.status`,
  );
  const appsQ = d.db.sqlite.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM apps WHERE removed_at IS NULL");
  const alertsQ = d.db.sqlite.query<FiringAlert, []>(
    `SELECT r.id AS ruleId, r.name AS rule, r.kind AS kind, COALESCE(r.app_slug, '') AS app, s.subject AS subject
     FROM alert_state s JOIN alert_rules r ON r.id = s.rule_id WHERE s.state = 'firing' AND r.enabled = 1
     ORDER BY r.id, s.subject`,
  );
  let cached: DbFigures | null = null;
  const figures = (): DbFigures => {
    const now = d.clock.now();
    if (cached === null || now - cached.at >= cacheMs || now < cached.at) {
      cached = { at: now, deploys: deploysQ.all(), apps: appsQ.get()?.n ?? 0, alerts: alertsQ.all() };
    }
    return cached;
  };
  return {
    render() {
      const f = figures();
      return renderExposition({
        tick: d.metrics()?.latest() ?? null,
        requests: d.requests(),
        deploys: f.deploys,
        apps: f.apps,
        alerts: f.alerts,
        version: d.version,
      });
    },
  };
}
