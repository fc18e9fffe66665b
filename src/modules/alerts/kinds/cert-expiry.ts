/**
 * cert_expiry: a certificate served for a host of an app expires within the threshold in days (or has expired).
 * Judged on the expiry date alone, so it fires at once; it resolves when a renewed certificate is served.
 */
import type { CertSource } from "../sources";
import { type Check, type Observation, round1 } from "./observation";

const DAY_MS = 86_400_000;

/** Build the check. */
export function certExpiryCheck(certs: CertSource): Check {
  return (rule, now) => {
    const obs: Observation[] = [];
    for (const c of certs.certs()) {
      if (rule.app !== null && c.app !== rule.app) continue;
      const days = (c.notAfter - now) / DAY_MS;
      const breach = days <= rule.threshold;
      const on = new Date(c.notAfter).toISOString().slice(0, 10);
      const left = days < 0 ? `expired on ${on}` : `expires in ${Math.floor(days)} days on ${on}`;
      obs.push({
        subject: `${c.app}/${c.host}`,
        app: c.app,
        breach,
        sustained: breach,
        value: round1(days),
        message: breach
          ? `certificate of ${c.host} (app ${c.app}) ${left} (threshold ${rule.threshold} days)`
          : `certificate of ${c.host} (app ${c.app}) renewed: ${left}`,
      });
    }
    return obs;
  };
}
