/**
 * cpu, memory and disk from raw metric samples. cpu and memory are judged per container (replicas apart, subject
 * `app/service-n`): a limit is per container, and one replica stuck at 100 % is what the rule is for. cpu is the
 * percent of the container's CPU limit when it has one, else of one core; memory of its limit, else of host memory.
 * disk is the host's data_dir filesystem, firing under X % free.
 */
import type { ContainerSample, HostSample, MetricsReader } from "../../metrics/samples";
import { type ActiveRule, type Check, forText, type Observation, round1 } from "./observation";
import { GRACE_MS, judgeWindow, type Point } from "./window";

/**
 * The subject of a container: its app and `service-n` (`sundeck-web-web-1`, or `sundeck-web_web_1` as older compose
 * names it, → `web/web-1`); a name of another shape is kept whole.
 */
export function containerSubject(s: Pick<ContainerSample, "app" | "name" | "service">): string {
  const n = /[-_](\d+)$/.exec(s.name);
  const ours = s.name.startsWith(`sundeck-${s.app}-`) || s.name.startsWith(`sundeck-${s.app}_`);
  return `${s.app}/${ours && n && s.service ? `${s.service}-${n[1]}` : s.name}`;
}

/** Build the checks on a metrics reader; samples are read once per evaluation time and app, whatever the rule count. */
export function usageChecks(reader: MetricsReader): { cpu: Check; memory: Check; disk: Check } {
  let cacheAt = Number.NaN;
  const cache = new Map<string, ContainerSample[] | HostSample[]>();
  const cached = <T>(now: number, key: string, read: () => T): T => {
    if (cacheAt !== now) {
      cache.clear();
      cacheAt = now;
    }
    if (!cache.has(key)) cache.set(key, read() as ContainerSample[]);
    return cache.get(key) as T;
  };
  const since = (rule: ActiveRule, now: number) => now - Math.max(rule.durationMs, GRACE_MS);
  const containers = (rule: ActiveRule, now: number) =>
    cached(now, `c|${since(rule, now)}|${rule.app ?? ""}`, () =>
      reader.containerSamples(since(rule, now), rule.app ?? undefined),
    );

  /** Per container: its points (running samples with a value), oldest first. */
  const byContainer = (samples: ContainerSample[], value: (s: ContainerSample) => number | null) => {
    const out = new Map<string, { app: string; points: Point[] }>();
    for (const s of samples) {
      if (!s.app || !s.running) continue;
      const v = value(s);
      if (v === null) continue;
      const key = containerSubject(s);
      const entry = out.get(key) ?? { app: s.app, points: [] };
      entry.points.push({ t: s.t, v });
      out.set(key, entry);
    }
    return out;
  };

  const perContainer = (
    rule: ActiveRule,
    now: number,
    value: (s: ContainerSample) => number | null,
    describe: (subject: string, v: number, firing: boolean) => string,
  ): Observation[] => {
    const obs: Observation[] = [];
    for (const [subject, { app, points }] of byContainer(containers(rule, now), value)) {
      const j = judgeWindow(points, now, rule.durationMs, (v) => v >= rule.threshold);
      if (!j) continue;
      obs.push({
        subject,
        app,
        breach: j.breach,
        sustained: j.sustained,
        value: round1(j.value),
        message: describe(subject, j.value, j.breach),
      });
    }
    return obs;
  };

  const cpu: Check = (rule, now) => {
    const limited = new Set<string>();
    return perContainer(
      rule,
      now,
      (s) => {
        if (s.cpuLimitPct !== null) limited.add(containerSubject(s));
        return s.cpuLimitPct ?? s.cpuPct;
      },
      (subject, v, breach) => {
        const of = limited.has(subject) ? "of its limit" : "of one core";
        return breach
          ? `cpu of ${subject} at ${round1(v)}% ${of}${forText(rule)} (threshold ${rule.threshold}%)`
          : `cpu of ${subject} back to ${round1(v)}% ${of} (threshold ${rule.threshold}%)`;
      },
    );
  };

  const memory: Check = (rule, now) => {
    const hostTotal = reader.latest()?.host.memTotalBytes ?? null;
    const ofHost = new Set<string>();
    return perContainer(
      rule,
      now,
      (s) => {
        if (s.memBytes === null) return null;
        // no limit (or one above the host's memory, which is no limit in practice): a share of the host
        if (s.memLimitBytes !== null && s.memLimitBytes > 0 && (hostTotal === null || s.memLimitBytes < hostTotal)) {
          return (s.memBytes / s.memLimitBytes) * 100;
        }
        if (!hostTotal) return null;
        ofHost.add(containerSubject(s));
        return (s.memBytes / hostTotal) * 100;
      },
      (subject, v, breach) => {
        const of = ofHost.has(subject) ? "of host memory" : "of its limit";
        return breach
          ? `memory of ${subject} at ${round1(v)}% ${of}${forText(rule)} (threshold ${rule.threshold}%)`
          : `memory of ${subject} back to ${round1(v)}% ${of} (threshold ${rule.threshold}%)`;
      },
    );
  };

  const disk: Check = (rule, now) => {
    const samples = cached(now, `h|${since(rule, now)}`, () => reader.hostSamples(since(rule, now)));
    const points: Point[] = [];
    for (const h of samples) {
      if (h.diskFreeBytes === null || !h.diskTotalBytes) continue;
      points.push({ t: h.t, v: (h.diskFreeBytes / h.diskTotalBytes) * 100 });
    }
    const j = judgeWindow(points, now, rule.durationMs, (v) => v < rule.threshold);
    if (!j) return [];
    const message = j.breach
      ? `host disk at ${round1(j.value)}% free${forText(rule)} (threshold ${rule.threshold}%)`
      : `host disk back to ${round1(j.value)}% free (threshold ${rule.threshold}%)`;
    return [{ subject: "host", app: null, breach: j.breach, sustained: j.sustained, value: round1(j.value), message }];
  };

  return { cpu, memory, disk };
}
