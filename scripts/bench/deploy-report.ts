/**
 * The deploy benchmark's samples and report: totals per side with the overhead verdict, milestones and phases side by
 * side, and what Sundeck spends inside a deploy.
 */
import { fmtMs, type Spread, spread, table } from "./measure";

/** One bare run, ms from the spawn of `docker-compose up -d`. */
export interface BareSample {
  firstLine: number;
  exit: number;
  /** First poll after compose's exit that saw every container running and healthy. */
  ready: number;
}

/** One Sundeck run, ms from the POST. */
export interface SundeckSample {
  /** The POST answered 202. */
  accepted: number;
  /** Sundeck's first deploy-logs line ("deploying ...") and the first compose line there (server timestamps). */
  started: number;
  logsFirstLine: number;
  /** `compose up` called (spawned), its first output line, its end. */
  spawn: number;
  firstLine: number;
  exit: number;
  /** When the benchmark's own poller (same rule and interval as the bare side) first saw the project ready. */
  seenReady: number;
  /** The done frame arrived. */
  done: number;
  imageChecks: number;
  imageMs: number;
  pulls: number;
  polls: number;
  pollMs: number;
  /** Median pause between one stabilise poll's answer and the next poll (the poll interval as measured). */
  pollGap: number;
  /** From compose's end to the answer of the stabilise poll that found everything ready (the last one). */
  readyPoll: number;
  /** From that poll's answer to the done frame (recording the result, the final frame). */
  afterPoll: number;
}

export interface ReportOptions {
  services: number;
  pollMs: number;
  targetPct: number;
}

/** Median of the finite values. */
export const med = (xs: number[]) => spread(xs.filter((x) => Number.isFinite(x))).median;
const pct = (ratio: number) => `${ratio >= 0 ? "+" : ""}${(ratio * 100).toFixed(1)}%`;
const signed = (d: number) => (Number.isFinite(d) ? `${d >= 0 ? "+" : "-"}${fmtMs(Math.abs(d))}` : "-");
const delta = (a: number, b: number) => signed(b - a);
const spreadRow = (name: string, s: Spread) => [name, String(s.n), ...[s.min, s.median, s.mean, s.p90, s.max].map(fmtMs)];

/** Print the report; true when the median overhead is under the target. */
export function report(
  o: ReportOptions,
  bare: BareSample[],
  ours: SundeckSample[],
  prepareUs: { p50: number; p99: number },
): boolean {
  const a = spread(bare.map((b) => b.ready));
  const b = spread(ours.map((s) => s.done));
  const overhead = b.median / a.median - 1;
  const ok = overhead < o.targetPct / 100;
  const paired = med(ours.map((s, i) => s.done - bare[i].ready));
  const own = ours.map((s) => s.spawn + (s.done - s.seenReady));
  console.log(`\nDeploy to ready, ms (${o.services} services, interleaved, warm-up excluded)\n`);
  const sides = [spreadRow("bare docker-compose", a), spreadRow("sundeck", b)];
  console.log(table(["side", "n", "min", "median", "mean", "p90", "max"], sides, new Set([1, 2, 3, 4, 5, 6])));
  console.log(
    `\nOverhead (sundeck median / bare median - 1): ${pct(overhead)} (${delta(a.median, b.median)} ms); ` +
      `mean ${pct(b.mean / a.mean - 1)}; median of per-run differences ${signed(paired)} ms\n` +
      `Sundeck's own time (before compose + noticing readiness), median ${fmtMs(med(own))} ms = ` +
      `${pct(med(own) / a.median)} of the bare median (compose's run-to-run noise excluded)\n` +
      `${ok ? "PASS" : "FAIL"}: target is under ${o.targetPct}% overhead`,
  );

  const milestones: [string, number, number][] = [
    ["POST answered 202", Number.NaN, med(ours.map((s) => s.accepted))],
    ["compose up spawned", 0, med(ours.map((s) => s.spawn))],
    ["first compose output line", med(bare.map((x) => x.firstLine)), med(ours.map((s) => s.firstLine))],
    ["compose up exited", med(bare.map((x) => x.exit)), med(ours.map((s) => s.exit))],
    [`ready, seen by the bench's ${o.pollMs} ms poll`, a.median, med(ours.map((s) => s.seenReady))],
    ["ready, reported (sundeck: done frame)", a.median, b.median],
  ];
  console.log("\nMilestones (medians, ms from spawn / POST)\n");
  const mRows = milestones.map(([name, x, y]) => [name, fmtMs(x), fmtMs(y), delta(x, y)]);
  console.log(table(["milestone", "bare", "sundeck", "diff"], mRows, new Set([1, 2, 3])));

  const phases: [string, number, number][] = [
    ["before compose (POST -> spawn)", 0, med(ours.map((s) => s.spawn))],
    ["compose up (spawn -> exit; same program)", med(bare.map((x) => x.exit)), med(ours.map((s) => s.exit - s.spawn))],
    ["exit -> ready seen by the bench", med(bare.map((x) => x.ready - x.exit)), med(ours.map((s) => s.seenReady - s.exit))],
    ["ready seen -> reported", 0, med(ours.map((s) => s.done - s.seenReady))],
  ];
  console.log("\nPhases (medians of per-run durations, ms)\n");
  const pRows = phases.map(([name, x, y]) => [name, fmtMs(x), fmtMs(y), delta(x, y)]);
  console.log(table(["phase", "bare", "sundeck", "diff"], pRows, new Set([1, 2, 3])));

  const lag = ours.map((s) => s.done - s.seenReady).filter(Number.isFinite);
  const inside = [
    ["prepare() (parse, safety, labels, render)", `${prepareUs.p50.toFixed(0)} us median (p99 ${prepareUs.p99.toFixed(0)} us)`],
    ["POST -> 'deploying' line on deploy-logs", `${fmtMs(med(ours.map((s) => s.started)))} ms`],
    ["'deploying' line -> compose spawned", `${fmtMs(med(ours.map((s) => s.spawn - s.started)))} ms`],
    [
      "imageExists checks per deploy",
      `${med(ours.map((s) => s.imageChecks))} calls, ${fmtMs(med(ours.map((s) => s.imageMs)))} ms in total`,
    ],
    ["compose pulls", `${ours.reduce((n, s) => n + s.pulls, 0)} in ${ours.length} deploys`],
    ["POST -> first compose line on deploy-logs", `${fmtMs(med(ours.map((s) => s.logsFirstLine)))} ms`],
    [
      "stabilise polls per deploy",
      `${med(ours.map((s) => s.polls))} (${fmtMs(med(ours.map((s) => s.pollMs)))} ms each, ` +
        `${fmtMs(med(ours.map((s) => s.pollGap)))} ms apart)`,
    ],
    ["compose exit -> answer of the poll that found it ready", `${fmtMs(med(ours.map((s) => s.readyPoll)))} ms`],
    ["that answer -> done frame", `${fmtMs(med(ours.map((s) => s.afterPoll)))} ms`],
    ["ready seen by the bench -> done frame", `median ${fmtMs(med(lag))} ms, max ${fmtMs(Math.max(...lag))} ms`],
  ];
  console.log("\nInside sundeck\n");
  console.log(table(["step", "cost"], inside, new Set()));
  console.log("\nPer run, ms (bare / sundeck)");
  console.log(bare.map((x, i) => `  ${i + 1}: ${fmtMs(x.ready)} / ${fmtMs(ours[i]?.done ?? Number.NaN)}`).join("\n"));
  return ok;
}
