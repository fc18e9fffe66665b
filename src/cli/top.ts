/**
 * `sundeck top`: live CPU, memory, network and disk of every running container, grouped by app, like `docker stats`
 * but through the API. Each refresh lists the apps (their running containers), then reads each app's metrics over the
 * last two minutes and keeps the newest point that has values (the collector samples every 10 s). On a terminal the
 * table is redrawn in place until Ctrl-C; `--once`, `--output json` or a pipe print one snapshot and exit.
 */
import { defineCommand } from "citty";
import type { Api } from "../client/api";
import { outputFormat, printJson } from "../client/output";
import type { AppView } from "../shared/apps";
import type { AppMetrics, ContainerPoint, SystemMetrics, SystemPoint } from "../shared/metrics";
import { CliError } from "./errors";
import { UsageError } from "./exit";
import { appPath, connect, contextArg, outputArg, slugArg } from "./remote";

/** The window read per refresh: a few raw 10 s buckets, so the newest point with values is in it. */
const WINDOW = "2m";
/** Apps whose metrics are read at the same time. */
const PARALLEL = 8;

/** One running container in a snapshot (snake_case like the API; null where nothing was measured yet). */
export interface TopRow {
  app: string;
  service: string;
  container: string;
  id: string;
  /** Time of the point the values come from; null when the container has none in the window. */
  t: string | null;
  cpu_pct: number | null;
  cpu_limit_pct: number | null;
  mem_bytes: number | null;
  mem_limit_bytes: number | null;
  /** Of the memory limit, or of the host's memory without one. */
  mem_pct: number | null;
  net_rx_bps: number | null;
  net_tx_bps: number | null;
  blk_read_bps: number | null;
  blk_write_bps: number | null;
}

/** What one refresh shows; `--output json` prints it. */
export interface TopSnapshot {
  at: string;
  host: Pick<SystemPoint, "t" | "cpu_pct" | "load1" | "mem_used_bytes" | "mem_total_bytes"> | null;
  containers: TopRow[];
}

/** The newest point of a series with any value, or null. */
export function lastPoint<P extends { cpu_pct: number | null; t: string }>(points: readonly P[]): P | null {
  for (let i = points.length - 1; i >= 0; i--) {
    const p = points[i];
    if (Object.entries(p).some(([k, v]) => k !== "t" && v !== null)) return p;
  }
  return null;
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Read one snapshot: every running container of the apps (or of `app`), with its newest metrics point. */
export async function topSnapshot(api: Api, opts: { app?: string; now?: () => number } = {}): Promise<TopSnapshot> {
  const all = await api.get<AppView[]>("/apps");
  const apps = all.filter((a) => a.status !== "removed" && (opts.app === undefined || a.slug === opts.app));
  if (opts.app !== undefined && apps.length === 0) throw new CliError(`no app named ${opts.app} on ${api.where}`);
  // the host's figures are a bonus: without them memory without a limit has no percent
  const [system, metrics] = await Promise.all([
    api.get<SystemMetrics>(`/metrics/system?range=${WINDOW}`).catch(() => null),
    mapLimit(apps, PARALLEL, (a) => api.maybe<AppMetrics>("GET", appPath(a.slug, `/metrics?range=${WINDOW}`))),
  ]);
  const host = system ? lastPoint(system.points) : null;
  const rows: TopRow[] = [];
  apps.forEach((a, i) => {
    const series = metrics[i]?.containers ?? [];
    for (const s of a.services) {
      for (const c of s.containers) {
        if (c.state !== "running") continue;
        const m = series.find((x) => x.id.startsWith(c.id) || c.id.startsWith(x.id) || x.name === c.name);
        const p: ContainerPoint | null = m ? lastPoint(m.points) : null;
        const memOf = p?.mem_limit_bytes ?? host?.mem_total_bytes ?? null;
        rows.push({
          app: a.slug,
          service: s.name,
          container: c.name,
          id: c.id,
          t: p?.t ?? null,
          cpu_pct: p?.cpu_pct ?? null,
          cpu_limit_pct: p?.cpu_limit_pct ?? null,
          mem_bytes: p?.mem_bytes ?? null,
          mem_limit_bytes: p?.mem_limit_bytes ?? null,
          mem_pct: p?.mem_bytes != null && memOf ? Math.round((p.mem_bytes / memOf) * 10_000) / 100 : null,
          net_rx_bps: p?.net_rx_bps ?? null,
          net_tx_bps: p?.net_tx_bps ?? null,
          blk_read_bps: p?.blk_read_bps ?? null,
          blk_write_bps: p?.blk_write_bps ?? null,
        });
      }
    }
  });
  const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  rows.sort((x, y) => cmp(x.app, y.app) || cmp(x.service, y.service) || cmp(x.container, y.container));
  const at = new Date((opts.now ?? Date.now)()).toISOString();
  const hostOut = host
    ? {
        t: host.t,
        cpu_pct: host.cpu_pct,
        load1: host.load1,
        mem_used_bytes: host.mem_used_bytes,
        mem_total_bytes: host.mem_total_bytes,
      }
    : null;
  return { at, host: hostOut, containers: rows };
}

/** Bytes the way `docker stats` shows memory: 512B, 12.3KiB, 64MiB, 1.5GiB. */
export function formatBytes(n: number | null): string {
  if (n === null) return "-";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${Math.round(v)}B` : `${v < 10 ? v.toFixed(1) : Math.round(v)}${units[u]}`;
}

const pct = (v: number | null) => (v === null ? "-" : `${v.toFixed(1)}%`);
const rate = (v: number | null) => (v === null ? "-" : `${formatBytes(v)}/s`);
const pair = (a: string, b: string) => (a === "-" && b === "-" ? "-" : `${a} / ${b}`);

/** The snapshot as text: a host line, then one aligned row per container, apps together. */
export function renderTop(s: TopSnapshot): string {
  const lines: string[] = [];
  const h = s.host;
  if (h) {
    const load = h.load1 === null ? "" : `, load ${h.load1.toFixed(2)}`;
    lines.push(`host: cpu ${pct(h.cpu_pct)}, mem ${pair(formatBytes(h.mem_used_bytes), formatBytes(h.mem_total_bytes))}${load}`);
  }
  if (s.containers.length === 0) {
    lines.push("no running containers");
    return `${lines.join("\n")}\n`;
  }
  const headers = ["APP", "SERVICE", "CONTAINER", "CPU %", "MEM", "MEM %", "NET RX / TX", "BLOCK R / W"];
  const cells = s.containers.map((r) => [
    r.app,
    r.service,
    r.container,
    pct(r.cpu_pct),
    r.mem_limit_bytes === null ? formatBytes(r.mem_bytes) : pair(formatBytes(r.mem_bytes), formatBytes(r.mem_limit_bytes)),
    pct(r.mem_pct),
    pair(rate(r.net_rx_bps), rate(r.net_tx_bps)),
    pair(rate(r.blk_read_bps), rate(r.blk_write_bps)),
  ]);
  const widths = headers.map((hd, i) => Math.max(hd.length, ...cells.map((c) => c[i].length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]))
      .join("  ")
      .trimEnd();
  lines.push(line(headers), ...cells.map(line));
  return `${lines.join("\n")}\n`;
}

// redraw in place on the alternate screen (left as it was on exit), cursor hidden meanwhile
const ENTER = "\x1b[?1049h\x1b[?25l";
const LEAVE = "\x1b[?25h\x1b[?1049l";
const HOME_CLEAR = "\x1b[H\x1b[J";

/** Redraw the snapshot every `everyMs` until Ctrl-C; a failed refresh is shown and retried at the next one. */
async function live(read: () => Promise<TopSnapshot>, everyMs: number): Promise<void> {
  const out = process.stdout;
  let stop: () => void = () => {};
  const stopped = new Promise<void>((r) => {
    stop = r;
  });
  let done = false;
  const onSigint = () => {
    done = true;
    stop();
  };
  process.on("SIGINT", onSigint);
  out.write(ENTER);
  try {
    while (!done) {
      let frame: string;
      try {
        frame = renderTop(await read());
      } catch (e) {
        frame = `refresh failed: ${(e as Error).message}\n`;
      }
      if (done) break;
      const when = new Date().toLocaleTimeString();
      out.write(`${HOME_CLEAR}sundeck top: every ${everyMs / 1000}s, ${when} (Ctrl-C to quit)\n${frame}`);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([stopped, new Promise<void>((r) => (timer = setTimeout(r, everyMs)))]);
      clearTimeout(timer);
    }
  } finally {
    process.off("SIGINT", onSigint);
    out.write(LEAVE);
  }
}

export default defineCommand({
  meta: { name: "top", description: "Show live CPU, memory, network and disk of the running containers, by app" },
  args: {
    app: { type: "string", description: "only this app", valueHint: "slug" },
    once: { type: "boolean", description: "print one table and exit", default: false },
    interval: { type: "string", description: "seconds between refreshes (1 to 60)", default: "5", valueHint: "s" },
    ...outputArg,
    ...contextArg,
  },
  async run({ args }) {
    const format = outputFormat(args.output);
    const app = args.app === undefined ? undefined : slugArg(args.app, "--app");
    if (!/^\d+$/.test(args.interval) || Number(args.interval) < 1 || Number(args.interval) > 60)
      throw new UsageError("--interval must be a whole number of seconds from 1 to 60");
    const api = connect(args);
    const read = () => topSnapshot(api, { app });
    if (format === "json") return printJson(await read());
    // the first read fails loudly (bad context, unknown app); later ones are shown and retried
    const first = await read();
    if (args.once || !process.stdout.isTTY) return void process.stdout.write(renderTop(first));
    await live(
      (() => {
        let pending: TopSnapshot | null = first;
        return async () => {
          const s = pending ?? (await read());
          pending = null;
          return s;
        };
      })(),
      Number(args.interval) * 1000,
    );
  },
});
