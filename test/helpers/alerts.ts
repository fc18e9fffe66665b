/**
 * Around the alert evaluator: a metrics reader fed by hand (ticks pushed at the fake clock's time), a notifier that
 * records what it was asked to send, scripted apps, request counts and certificates, all on a real temp SQLite.
 */
import { join } from "node:path";
import { type Db, openDb } from "../../src/db";
import { LogSink } from "../../src/log/logger";
import { createEvaluator, type Evaluator } from "../../src/modules/alerts/evaluator";
import { type AlertRepo, createAlertRepo, type RuleFields } from "../../src/modules/alerts/repo";
import type { ServedCert } from "../../src/modules/alerts/sources";
import type { ContainerSample, HostSample, MetricsReader, Tick } from "../../src/modules/metrics/samples";
import type { AlertNotification } from "../../src/shared/alerts";
import { FakeClock } from "./clock";
import { containerSample, hostSample } from "./metrics";
import { tempDir } from "./tmp";

/** A reader holding every tick pushed to it. */
export class ManualReader implements MetricsReader {
  ticks: Tick[] = [];
  private listeners = new Set<(t: Tick) => void>();
  latest = () => this.ticks.at(-1) ?? null;
  containerSamples = (since: number, app?: string): ContainerSample[] =>
    this.ticks.filter((t) => t.t >= since).flatMap((t) => t.containers.filter((c) => !app || c.app === app));
  hostSamples = (since: number): HostSample[] => this.ticks.filter((t) => t.t >= since).map((t) => t.host);
  onTick(l: (t: Tick) => void) {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  /** Store a tick at `t` and tell the listeners (as the metrics service does after storing). */
  push(
    t: number,
    containers: Array<Partial<ContainerSample> & { containerId: string; app: string }>,
    host: Partial<HostSample> = {},
  ) {
    const tick: Tick = { t, containers: containers.map((c) => containerSample(t, c)), host: hostSample(t, host) };
    this.ticks.push(tick);
    for (const l of this.listeners) l(tick);
  }
}

/** Records notifications instead of sending them. */
export class RecordingNotifier {
  sent: Array<{ ids: number[]; n: AlertNotification }> = [];
  notify(ids: number[], n: AlertNotification) {
    this.sent.push({ ids, n });
  }
  /** `state subject-ish message` lines, for compact assertions. */
  events = () => this.sent.map((s) => `${s.n.event} ${s.n.message}`);
}

export interface AlertBench {
  db: Db;
  dbPath: string;
  clock: FakeClock;
  reader: ManualReader;
  notifier: RecordingNotifier;
  repo: AlertRepo;
  evaluator: Evaluator;
  apps: { live: string[]; up: string[]; running: Record<string, number | null> };
  requests: Record<string, { requests: number; errors5xx: number }>;
  certs: ServedCert[];
  rule(f: Partial<RuleFields> & Pick<RuleFields, "kind">): number;
  /** A new evaluator on the same database (the samples stay, as the metrics store keeps them), as after a restart. */
  restart(): void;
}

/** Everything around an evaluator, on a fresh database. */
export function alertBench(): AlertBench {
  const dbPath = join(tempDir(), "sundeck.db");
  const b = {
    dbPath,
    db: openDb(dbPath),
    clock: new FakeClock(),
    reader: new ManualReader(),
    notifier: new RecordingNotifier(),
    apps: { live: [] as string[], up: [] as string[], running: {} as Record<string, number | null> },
    requests: {} as AlertBench["requests"],
    certs: [] as ServedCert[],
  } as AlertBench;
  const build = () => {
    b.repo = createAlertRepo(b.db);
    b.evaluator = createEvaluator({
      db: b.db,
      repo: b.repo,
      clock: b.clock,
      log: new LogSink({ stdout: false }).logger("alerts"),
      reader: b.reader,
      notifier: b.notifier,
      apps: { live: () => b.apps.live, deployed: () => b.apps.up, running: (s) => b.apps.running[s] ?? null },
      requests: { window: (s) => b.requests[s] ?? { requests: 0, errors5xx: 0 } },
      certs: { certs: () => b.certs },
    });
  };
  build();
  b.rule = (f) =>
    b.repo.insertRule(
      {
        name: `${f.kind} rule`,
        app_slug: null,
        threshold: 80,
        duration: "5m",
        webhook_ids: [1],
        enabled: true,
        repeat_interval: null,
        silenced_until: null,
        ...f,
      },
      new Date(b.clock.now()).toISOString(),
    ).id;
  b.restart = () => {
    b.db.close();
    b.db = openDb(dbPath);
    build();
  };
  return b;
}
