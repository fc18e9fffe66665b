/**
 * The proxy benchmark's report: per listener kind and body size a table of every load and path (medians over the
 * rounds, with the spread of req/s), then the verdicts against issue 4's targets.
 */
import { fmtMs, spread, table } from "./measure";
import type { WrkResult } from "./proxy-run";

export type TargetKey = "direct" | "sundeck" | "caddy" | "bare" | "sundeck-tls" | "caddy-tls";
export type BodyKey = "small" | "large";
export type LoadKey = "max" | "paced" | "low";

/** One wrk run plus the CPU the processes spent on it. */
export interface Sample extends WrkResult {
  round: number;
  /** CPU µs per request of the proxy process (of the upstream for direct). */
  proxyCpuUs: number;
  /** CPU µs per request of the upstream process. */
  upstreamCpuUs: number;
}

export interface Load {
  key: LoadKey;
  label: string;
}

export const TARGET_LABEL: Record<TargetKey, string> = {
  direct: "direct",
  sundeck: "sundeck",
  caddy: "caddy",
  bare: "bun fetch (ref.)",
  "sundeck-tls": "sundeck (tls)",
  "caddy-tls": "caddy (tls)",
};

export const BODY_LABEL: Record<BodyKey, string> = { small: "small body (20 B)", large: "100 KiB body" };

/** Samples by `target|body|load`. */
export class Results {
  private readonly map = new Map<string, Sample[]>();

  add(t: TargetKey, b: BodyKey, l: LoadKey, s: Sample): void {
    const k = `${t}|${b}|${l}`;
    const list = this.map.get(k) ?? [];
    list.push(s);
    this.map.set(k, list);
  }

  get(t: TargetKey, b: BodyKey, l: LoadKey): Sample[] {
    return this.map.get(`${t}|${b}|${l}`) ?? [];
  }

  all(): Sample[] {
    return [...this.map.values()].flat();
  }
}

export const med = (xs: number[]) => spread(xs.filter((x) => Number.isFinite(x))).median;

/** Median over the rounds of p99(target) - p99(direct) in the same round. */
export function p99Overhead(r: Results, t: TargetKey, b: BodyKey, l: LoadKey): number {
  const direct = new Map(r.get("direct", b, l).map((s) => [s.round, s.p99]));
  return med(r.get(t, b, l).map((s) => s.p99 - (direct.get(s.round) ?? Number.NaN)));
}

const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "-");
const signedMs = (d: number) => (Number.isFinite(d) ? `${d >= 0 ? "+" : "-"}${fmtMs(Math.abs(d))}` : "-");

/** One table: every load and path for one listener kind and body. */
export function bodyTable(r: Results, targets: TargetKey[], body: BodyKey, loads: Load[]): string {
  const rows: string[][] = [];
  for (const load of loads) {
    for (const t of targets) {
      const s = r.get(t, body, load.key);
      if (s.length === 0) continue;
      const rps = spread(s.map((x) => x.rps));
      const bad = s.reduce((n, x) => n + x.errors + x.badStatus, 0);
      rows.push([
        load.label,
        TARGET_LABEL[t],
        int(rps.median),
        `${int(rps.min)}-${int(rps.max)}`,
        fmtMs(med(s.map((x) => x.p50))),
        fmtMs(med(s.map((x) => x.p99))),
        t === "direct" ? "" : signedMs(p99Overhead(r, t, body, load.key)),
        fmtMs(med(s.map((x) => x.max))),
        t === "direct" ? "-" : med(s.map((x) => x.proxyCpuUs)).toFixed(0),
        med(s.map((x) => x.upstreamCpuUs)).toFixed(0),
        bad ? String(bad) : "0",
      ]);
    }
  }
  return table(
    [
      "load",
      "path",
      "req/s",
      "req/s min-max",
      "p50 ms",
      "p99 ms",
      "p99 - direct",
      "max ms",
      "proxy CPU µs/req",
      "upstr. CPU µs/req",
      "errors",
    ],
    rows,
    new Set([2, 3, 4, 5, 6, 7, 8, 9, 10]),
  );
}

/** A verdict line; returns whether it passed. */
export function verdict(ok: boolean, text: string): boolean {
  console.log(`  ${ok ? "PASS" : "FAIL"}  ${text}`);
  return ok;
}

export { fmtMs, int, signedMs };
