/**
 * http_5xx: the share of 5xx answers among an app's requests over the rule's duration (at least a minute), from the
 * proxy's request stats. The window is the duration, so the rate is judged whole: it fires as soon as it is over.
 * Too few requests say nothing: below MIN_REQUESTS the app counts as fine.
 */
import type { AppsSource, RequestSource } from "../sources";
import { type Check, type Observation, round1 } from "./observation";

/** Fewest requests in the window for a rate to count (2 errors out of 3 requests is no outage). */
export const MIN_REQUESTS = 10;
const MIN_WINDOW_MS = 60_000;

/** Build the check. */
export function http5xxCheck(apps: AppsSource, requests: RequestSource): Check {
  return (rule, _now) => {
    const live = apps.live();
    const slugs = rule.app === null ? live : live.filter((s) => s === rule.app);
    const windowMs = Math.max(rule.durationMs, MIN_WINDOW_MS);
    const over = rule.durationMs >= MIN_WINDOW_MS ? rule.duration : "1m";
    const obs: Observation[] = [];
    for (const slug of slugs) {
      const w = requests.window(slug, windowMs);
      const pct = w.requests > 0 ? (w.errors5xx / w.requests) * 100 : 0;
      const breach = w.requests >= MIN_REQUESTS && pct >= rule.threshold;
      obs.push({
        subject: slug,
        app: slug,
        breach,
        sustained: breach,
        value: round1(pct),
        message: breach
          ? `5xx rate of ${slug} at ${round1(pct)}% of ${w.requests} requests over ${over} (threshold ${rule.threshold}%)`
          : `5xx rate of ${slug} back to ${round1(pct)}% of ${w.requests} requests over ${over} (threshold ${rule.threshold}%)`,
      });
    }
    return obs;
  };
}
