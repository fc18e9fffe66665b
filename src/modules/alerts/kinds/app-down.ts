/**
 * app_down: a deployed app has no running container, or its containers sent no metrics for the rule's duration
 * while the collector was running all along. The evaluator times the duration from when the app was first seen down.
 * An app a user stopped counts as down too (issue 12: "stopping the app fires app-down"; silence or disable the rule
 * for planned stops); a removed app is not watched, so its alert resolves.
 */
import type { MetricsReader } from "../../metrics/samples";
import type { AppsSource } from "../sources";
import { type Check, forText, type Observation } from "./observation";
import { GRACE_MS } from "./window";

/** The shortest "no metrics" window: a few collection intervals, so one late tick is no outage. */
const MIN_SILENCE_MS = 60_000;

/** Build the check. */
export function appDownCheck(apps: AppsSource, reader: MetricsReader | null): Check {
  /** Whether the collector sampled the host from `from` up to now without pausing (then an app's silence means something). */
  const collecting = (from: number, now: number) => {
    if (!reader) return false;
    const host = reader.hostSamples(from - GRACE_MS);
    if (host.length === 0 || host[0].t > from + GRACE_MS || host[host.length - 1].t < now - GRACE_MS) return false;
    return host.every((h, i) => i === 0 || h.t - host[i - 1].t <= 2 * GRACE_MS);
  };

  return (rule, now) => {
    const up = apps.deployed();
    const slugs = rule.app === null ? up : up.filter((s) => s === rule.app);
    const silence = Math.max(rule.durationMs, MIN_SILENCE_MS);
    const watching = collecting(now - silence, now);
    const obs: Observation[] = [];
    for (const slug of slugs) {
      const running = apps.running(slug);
      if (running === null) {
        obs.push({ subject: slug, app: slug, breach: null, value: null, message: "" });
        continue;
      }
      if (running === 0) {
        obs.push({
          subject: slug,
          app: slug,
          breach: true,
          value: 0,
          message: `app ${slug} is down: no running container${forText(rule)}`,
        });
        continue;
      }
      const silent = watching && !reader!.containerSamples(now - silence, slug).some((s) => s.running);
      obs.push(
        silent
          ? // the silence spans the duration already: no pending time on top
            {
              subject: slug,
              app: slug,
              breach: true,
              sustained: true,
              value: running,
              message: `app ${slug} is down: no metrics for ${Math.round(silence / 60_000)}m`,
            }
          : { subject: slug, app: slug, breach: false, value: running, message: `app ${slug} is up again (${running} running)` },
      );
    }
    return obs;
  };
}
