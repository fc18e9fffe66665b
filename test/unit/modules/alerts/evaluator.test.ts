/**
 * The alert evaluator on a real SQLite with a fake clock and scripted metrics: pending until the duration is covered,
 * one history row and one notification per transition, repeat, silence, state kept across a restart, and each kind.
 */
import { afterEach, describe, expect, it } from "bun:test";
import { containerSubject } from "../../../../src/modules/alerts/kinds/usage";
import { type AlertBench, alertBench } from "../../../helpers/alerts";

const SEC = 1000;
const MIN = 60 * SEC;
const WEB = { containerId: "c1", app: "web", name: "sundeck-web-web-1", service: "web" };

let b: AlertBench;
afterEach(() => {
  b.evaluator.stop();
  b.db.close();
});

/** Tick every 10 s for `ms` (the first tick 10 s from now), with the container at `cpu` % of one core. */
function cpuFor(ms: number, cpu: number, over: Record<string, unknown> = {}) {
  for (let t = 10 * SEC; t <= ms; t += 10 * SEC) {
    b.clock.advance(10 * SEC);
    b.reader.push(b.clock.now(), [{ ...WEB, cpuPct: cpu, ...over }]);
  }
}
const history = () => b.db.sqlite.query("SELECT state, subject, app_slug, message FROM alert_history ORDER BY id").all() as any[];
const states = (rule: number) => b.repo.states(rule).map((s) => `${s.subject} ${s.state}`);

describe("cpu: above the threshold for the duration", () => {
  it("is pending until five minutes of samples are above, then fires once and resolves once", () => {
    b = alertBench();
    const rule = b.rule({ kind: "cpu", threshold: 80, duration: "5m" });
    b.evaluator.start();
    cpuFor(4 * MIN + 30 * SEC, 97);
    expect(states(rule)).toEqual(["web/web-1 pending"]);
    expect(b.notifier.sent).toEqual([]);
    cpuFor(40 * SEC, 97);
    expect(states(rule)).toEqual(["web/web-1 firing"]);
    expect(b.notifier.events()).toEqual(["alert.firing cpu of web/web-1 at 97% of one core for 5m (threshold 80%)"]);
    const n = b.notifier.sent[0];
    expect(n.ids).toEqual([1]);
    expect(n.n).toMatchObject({ state: "firing", app_slug: "web", value: 97, rule: { id: rule, kind: "cpu", threshold: 80 } });
    cpuFor(10 * MIN, 99);
    expect(b.notifier.sent.length).toBe(1);
    cpuFor(10 * SEC, 12);
    expect(b.notifier.events()[1]).toBe("alert.resolved cpu of web/web-1 back to 12% of one core (threshold 80%)");
    expect(history().map((h) => `${h.state} ${h.subject} ${h.app_slug}`)).toEqual([
      "firing web/web-1 web",
      "resolved web/web-1 web",
    ]);
    expect(states(rule)).toEqual([]);
  });

  it("does not fire for a container that has run hot for less than the duration, nor across a dip", () => {
    b = alertBench();
    const rule = b.rule({ kind: "cpu", duration: "5m" });
    b.evaluator.start();
    cpuFor(3 * MIN, 95);
    cpuFor(10 * SEC, 50);
    expect(states(rule)).toEqual([]);
    cpuFor(4 * MIN, 95);
    expect(states(rule)).toEqual(["web/web-1 pending"]);
    expect(b.notifier.sent).toEqual([]);
  });

  it("judges the percent of the limit when the container has one, and only the rule's app", () => {
    b = alertBench();
    b.rule({ kind: "cpu", threshold: 90, duration: "0s", app_slug: "web" });
    b.evaluator.start();
    b.clock.advance(10 * SEC);
    b.reader.push(b.clock.now(), [
      { ...WEB, cpuPct: 50, cpuLimitPct: 100 },
      { containerId: "c2", app: "shop", name: "sundeck-shop-web-1", cpuPct: 300 },
    ]);
    expect(b.notifier.events()).toEqual(["alert.firing cpu of web/web-1 at 100% of its limit (threshold 90%)"]);
  });

  it("names a container by app and service-n, whichever separator compose used", () => {
    expect(containerSubject({ app: "web", name: "sundeck-web-api-2", service: "api" })).toBe("web/api-2");
    expect(containerSubject({ app: "web", name: "sundeck-web_api_2", service: "api" })).toBe("web/api-2");
    expect(containerSubject({ app: "web", name: "elsewhere", service: "api" })).toBe("web/elsewhere");
  });

  it("resolves an alert whose container is gone", () => {
    b = alertBench();
    b.rule({ kind: "cpu", duration: "0s" });
    b.evaluator.start();
    cpuFor(10 * SEC, 95);
    // one tick without it is a missed read; two are a container gone
    b.clock.advance(10 * SEC);
    b.reader.push(b.clock.now(), []);
    expect(b.notifier.sent.length).toBe(1);
    b.clock.advance(10 * SEC);
    b.reader.push(b.clock.now(), []);
    expect(b.notifier.events()[1]).toBe("alert.resolved cpu alert of web/web-1 resolved: no longer observed");
  });
});

describe("notifications", () => {
  it("repeats every repeat_interval while firing", () => {
    b = alertBench();
    b.rule({ kind: "cpu", duration: "0s", repeat_interval: "30m" });
    b.evaluator.start();
    cpuFor(29 * MIN + 50 * SEC, 95);
    expect(b.notifier.sent.length).toBe(1);
    cpuFor(20 * SEC, 95);
    expect(b.notifier.sent.length).toBe(2);
    expect(b.notifier.sent[1].n.event).toBe("alert.firing");
    expect(history().length).toBe(1);
  });

  it("sends nothing while silenced but records the history; a firing never sent is not resolved aloud", () => {
    b = alertBench();
    b.rule({ kind: "cpu", duration: "0s", silenced_until: new Date(b.clock.now() + 10 * MIN).toISOString() });
    b.evaluator.start();
    cpuFor(MIN, 95);
    cpuFor(10 * SEC, 10);
    expect(b.notifier.sent).toEqual([]);
    expect(history().map((h) => h.state)).toEqual(["firing", "resolved"]);
  });

  it("tells once the silence is over about an alert still firing", () => {
    b = alertBench();
    b.rule({ kind: "cpu", duration: "0s", silenced_until: new Date(b.clock.now() + 2 * MIN).toISOString() });
    b.evaluator.start();
    cpuFor(MIN, 95);
    expect(b.notifier.sent).toEqual([]);
    cpuFor(2 * MIN, 95);
    expect(b.notifier.events()).toEqual(["alert.firing cpu of web/web-1 at 95% of one core (threshold 80%)"]);
    cpuFor(10 * SEC, 10);
    expect(b.notifier.sent.map((s) => s.n.event)).toEqual(["alert.firing", "alert.resolved"]);
  });

  it("notifies nobody for a rule without webhooks, and skips disabled rules", () => {
    b = alertBench();
    b.rule({ kind: "cpu", duration: "0s", webhook_ids: [] });
    b.rule({ kind: "cpu", duration: "0s", enabled: false, name: "off" });
    b.evaluator.start();
    cpuFor(10 * SEC, 95);
    expect(b.notifier.sent).toEqual([]);
    expect(history().length).toBe(1);
  });

  it("keeps its state across a restart: a firing alert is not announced again, its resolve is", () => {
    b = alertBench();
    const rule = b.rule({ kind: "cpu", duration: "1m" });
    b.evaluator.start();
    cpuFor(2 * MIN, 95);
    expect(b.notifier.sent.length).toBe(1);
    b.evaluator.stop();
    b.restart();
    b.evaluator.start();
    cpuFor(5 * MIN, 95);
    expect(b.notifier.sent.length).toBe(1);
    expect(states(rule)).toEqual(["web/web-1 firing"]);
    cpuFor(10 * SEC, 5);
    expect(b.notifier.sent.map((s) => s.n.event)).toEqual(["alert.firing", "alert.resolved"]);
  });
});

describe("memory and disk", () => {
  it("memory: of the limit when set, of host memory without one", () => {
    b = alertBench();
    b.rule({ kind: "memory", threshold: 85, duration: "0s" });
    b.evaluator.start();
    b.clock.advance(10 * SEC);
    b.reader.push(
      b.clock.now(),
      [
        { ...WEB, memBytes: 90, memLimitBytes: 100 },
        { containerId: "c2", app: "shop", name: "sundeck-shop-db-1", service: "db", memBytes: 900, memLimitBytes: null },
        { containerId: "c3", app: "shop", name: "sundeck-shop-cache-1", service: "cache", memBytes: 100, memLimitBytes: 200 },
      ],
      { memTotalBytes: 1000 },
    );
    expect(b.notifier.events().sort()).toEqual([
      "alert.firing memory of shop/db-1 at 90% of host memory (threshold 85%)",
      "alert.firing memory of web/web-1 at 90% of its limit (threshold 85%)",
    ]);
  });

  it("disk: fires under the percent free for the duration, as a host alert", () => {
    b = alertBench();
    b.rule({ kind: "disk", threshold: 15, duration: "1m" });
    b.evaluator.start();
    for (let i = 0; i < 8; i++) {
      b.clock.advance(10 * SEC);
      b.reader.push(b.clock.now(), [], { diskFreeBytes: 10, diskTotalBytes: 100 });
    }
    expect(b.notifier.events()).toEqual(["alert.firing host disk at 10% free for 1m (threshold 15%)"]);
    expect(b.notifier.sent[0].n.app_slug).toBeNull();
    b.clock.advance(10 * SEC);
    b.reader.push(b.clock.now(), [], { diskFreeBytes: 50, diskTotalBytes: 100 });
    expect(b.notifier.events()[1]).toBe("alert.resolved host disk back to 50% free (threshold 15%)");
  });
});

describe("app_down, http_5xx, cert_expiry, backup_failed", () => {
  it("app_down: no running container for the duration fires; running again resolves; a removed app is not watched", () => {
    b = alertBench();
    b.apps.up = ["web"];
    b.apps.running.web = 0;
    b.rule({ kind: "app_down", duration: "1m" });
    b.evaluator.evaluateTimed();
    expect(b.notifier.sent).toEqual([]);
    b.clock.advance(MIN);
    b.evaluator.evaluateTimed();
    expect(b.notifier.events()).toEqual(["alert.firing app web is down: no running container for 1m"]);
    b.apps.running.web = 2;
    b.evaluator.evaluateTimed();
    expect(b.notifier.events()[1]).toBe("alert.resolved app web is up again (2 running)");
    b.apps.running.web = 0;
    b.rule({ kind: "app_down", duration: "0s", app_slug: "web", name: "at once" });
    b.evaluator.evaluateTimed();
    expect(b.notifier.sent.length).toBe(3);
    b.apps.up = [];
    b.evaluator.evaluateTimed();
    expect(b.notifier.events()[3]).toBe("alert.resolved app_down alert of web resolved: no longer observed");
  });

  it("app_down: no metrics of a running app while the collector ran all along", () => {
    b = alertBench();
    b.apps.up = ["web"];
    b.apps.running.web = 1;
    b.rule({ kind: "app_down", duration: "2m" });
    const ticks = (n: number) => {
      for (let i = 0; i < n; i++) {
        b.clock.advance(10 * SEC);
        b.reader.push(b.clock.now(), []);
      }
    };
    // the collector has not run for two minutes yet, then it pauses for two: silence proves nothing
    ticks(5);
    b.evaluator.evaluateTimed();
    b.clock.advance(2 * MIN);
    ticks(1);
    b.evaluator.evaluateTimed();
    expect(b.notifier.sent).toEqual([]);
    ticks(12);
    b.evaluator.evaluateTimed();
    expect(b.notifier.events()).toEqual(["alert.firing app web is down: no metrics for 2m"]);
  });

  it("app_down: an engine that cannot say leaves the state as it is", () => {
    b = alertBench();
    b.apps.up = ["web"];
    b.apps.running.web = 0;
    b.rule({ kind: "app_down", duration: "0s" });
    b.evaluator.evaluateTimed();
    b.apps.running.web = null;
    b.evaluator.evaluateTimed();
    expect(b.notifier.sent.map((s) => s.n.event)).toEqual(["alert.firing"]);
  });

  it("http_5xx: the share of 5xx over the window, with enough requests to mean something", () => {
    b = alertBench();
    b.apps.live = ["web", "shop"];
    b.requests.web = { requests: 200, errors5xx: 50 };
    b.requests.shop = { requests: 5, errors5xx: 5 };
    b.rule({ kind: "http_5xx", threshold: 10, duration: "5m" });
    b.evaluator.evaluateTimed();
    expect(b.notifier.events()).toEqual(["alert.firing 5xx rate of web at 25% of 200 requests over 5m (threshold 10%)"]);
    b.requests.web = { requests: 200, errors5xx: 2 };
    b.evaluator.evaluateTimed();
    expect(b.notifier.events()[1]).toBe("alert.resolved 5xx rate of web back to 1% of 200 requests over 5m (threshold 10%)");
  });

  it("cert_expiry: a certificate within the days fires, a renewed one resolves", () => {
    b = alertBench();
    const day = 86_400_000;
    b.certs = [
      { app: "web", host: "web.example.com", notAfter: b.clock.now() + 5.5 * day },
      { app: "shop", host: "shop.example.com", notAfter: b.clock.now() + 60 * day },
    ];
    b.rule({ kind: "cert_expiry", threshold: 14, duration: "0s" });
    b.evaluator.evaluateTimed();
    expect(b.notifier.events()).toEqual([
      "alert.firing certificate of web.example.com (app web) expires in 5 days on 2026-11-28 (threshold 14 days)",
    ]);
    b.certs[0].notAfter = b.clock.now() + 90 * day;
    b.evaluator.evaluateTimed();
    expect(b.notifier.sent[1].n).toMatchObject({ event: "alert.resolved", app_slug: "web", value: 90 });
  });

  it("backup_failed: fires at once on the matching rules and resolves on the next good run", () => {
    b = alertBench();
    b.rule({ kind: "backup_failed", name: "every app" });
    b.rule({ kind: "backup_failed", name: "shop only", app_slug: "shop" });
    b.evaluator.raise({ kind: "backup_failed", app_slug: "web", message: "backup of web (postgres) failed: exit 1" });
    expect(b.notifier.sent.map((s) => `${s.n.rule!.name}: ${s.n.message}`)).toEqual([
      "every app: backup of web (postgres) failed: exit 1",
    ]);
    b.evaluator.raise({ kind: "backup_failed", app_slug: "web", message: "backup of web (postgres) failed again" });
    expect(b.notifier.sent.length).toBe(1);
    b.evaluator.raise({ kind: "backup_failed", app_slug: "web", message: "backup of web (postgres) succeeded", ok: true });
    expect(b.notifier.events()[1]).toBe("alert.resolved backup of web (postgres) succeeded");
    expect(history().map((h) => h.state)).toEqual(["firing", "resolved"]);
  });
});
