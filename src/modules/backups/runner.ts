/**
 * Backup runs: one at a time per config, in the background. The source (a strategy over the service's running
 * container, or Sundeck's own state) streams through gzip straight into the target, which counts and hashes what it
 * stores; nothing is held whole or written twice. Pre hooks run first (a failure fails the run), post hooks after
 * every attempt. A failure raises backup_failed (the alert state makes it one per incident), a success resolves it
 * and applies retention.
 */
import { iso } from "../../lib/time";
import { ArchiveRefused } from "./archive/refused";
import { checkedTar } from "./archive/vet";
import { type BackupDeps, configTarget, MAX_CONCURRENT_RUNS } from "./deps";
import { hooksOf, runHooks, withoutEnv } from "./hooks";
import type { ConfigRow, RunRow } from "./repo";
import { applyRetention } from "./retention";
import type { BackupContainer, BackupSource } from "./types";

export type Trigger = "schedule" | "manual" | "missed";

interface Active {
  runId: number;
  progress: number;
  abort: AbortController;
  done: Promise<void>;
  /** Gives the server-wide run slot back (idempotent); set once the run has one. */
  release?: () => void;
}

/** The object key of a run: grouped by app and service, named so a listing sorts by time. */
export function runKey(c: ConfigRow, runId: number, startedMs: number, extension: string): string {
  const stamp = iso(startedMs).replace(/[:.]/g, "-");
  const scope = c.appSlug ? `${c.appSlug}/${c.service ?? "_"}` : "_sundeck";
  return `${scope}/${c.strategy}-${stamp}-r${runId}${extension}`;
}

/** Build the runner. */
export function createRunner(d: BackupDeps) {
  const active = new Map<number, Active>();
  const maxRuns = d.maxConcurrentRuns ?? MAX_CONCURRENT_RUNS;
  let dumping = 0;
  const waiting: Array<() => void> = [];
  /** Wait for one of the server-wide run slots (or the abort); returns its release. */
  const slot = async (signal: AbortSignal): Promise<() => void> => {
    while (dumping >= maxRuns) {
      if (signal.aborted) throw new Error("cancelled: the server is stopping");
      await new Promise<void>((go) => {
        waiting.push(go);
        signal.addEventListener("abort", () => go(), { once: true });
      });
    }
    if (signal.aborted) throw new Error("cancelled: the server is stopping");
    dumping++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      dumping--;
      waiting.shift()?.();
    };
  };
  const subject = (c: ConfigRow) => `${c.appSlug ?? "sundeck"}/${c.service ?? "state"} ${c.strategy}`;

  /** The source of a config, and the container when it is an app service's. */
  const resolve = async (c: ConfigRow): Promise<{ source: BackupSource; container: BackupContainer | null }> => {
    if (c.strategy === "state" || c.appSlug === null) {
      if (!d.stateSource) throw new Error("sundeck state backups are not available in this build");
      return { source: d.stateSource, container: null };
    }
    const strategy = d.strategy(c.strategy);
    if (!strategy) throw new Error(`strategy ${c.strategy} is not available in this build`);
    const container = await d.containers.find(c.appSlug, c.service ?? "");
    return {
      source: { strategy: strategy.id, extension: strategy.extension, open: (ctl) => strategy.dump(container, ctl) },
      container,
    };
  };

  const execute = async (c: ConfigRow, run: RunRow, a: Active) => {
    await d.ready?.().catch(() => {});
    const signal = a.abort.signal;
    let container: BackupContainer | null = null;
    let error: string | null = null;
    let hooksStarted = false;
    try {
      a.release = await slot(signal);
      const r = await resolve(c);
      container = r.container;
      const key = runKey(c, run.id, Date.parse(run.startedAt), r.source.extension);
      d.repo.updateRun(run.id, { location: key });
      if (container) {
        hooksStarted = true;
        await runHooks(d.containers, container, "pre", hooksOf(c.preHooks), signal, d.hookTimeoutMs);
      }
      const opened = await r.source.open({ signal });
      // restores refuse links, devices and unsafe names (SPEC): a volume holding one fails its backup now, while the
      // data is still there to fix, instead of leaving an archive that cannot come back on the day it is needed
      const raw =
        r.source.strategy === "volume" ? checkedTar(opened, { gzip: false, maxBytes: Number.MAX_SAFE_INTEGER }) : opened;
      const gz = raw.pipeThrough(new CompressionStream("gzip") as unknown as TransformStream<Uint8Array, Uint8Array>);
      const stored = await configTarget(d, c).put(key, gz, {
        signal,
        progress: (b) => {
          a.progress = b;
        },
      });
      if (signal.aborted) throw new Error("cancelled: the server is stopping");
      d.repo.updateRun(run.id, {
        status: "succeeded",
        location: stored.key,
        sizeBytes: stored.sizeBytes,
        sha256: stored.sha256,
        finishedAt: iso(d.clock.now()),
      });
    } catch (e) {
      error = signal.aborted
        ? "cancelled: the server is stopping"
        : e instanceof ArchiveRefused
          ? `the volume could not be restored from this archive, so it is not kept: ${e.message}`
          : ((e as Error).message ?? String(e));
      // a dump tool's stderr may quote the container's env (a password in a connection string): viewers read runs
      if (container) error = withoutEnv(error, container.env);
    }
    if (container && hooksStarted && !signal.aborted) {
      try {
        await runHooks(d.containers, container, "post", hooksOf(c.postHooks), undefined, d.hookTimeoutMs);
      } catch (e) {
        // the archive is stored and good: a failing post hook is reported, it does not make the backup bad
        d.log.warn("post hook failed", { config: c.id, run: run.id, error: (e as Error).message });
        if (!error) d.repo.updateRun(run.id, { error: (e as Error).message });
      }
    }
    // the dump and its hooks are over: the next run may start (retention and alerts need no slot)
    a.release?.();
    if (error) {
      d.repo.updateRun(run.id, { status: "failed", error, finishedAt: iso(d.clock.now()), sizeBytes: null, sha256: null });
      d.log.warn("backup failed", { config: c.id, run: run.id, app: c.appSlug, error });
      // a state backup (no app) is matched by global rules
      d.alerts.raise({
        kind: "backup_failed",
        app_slug: c.appSlug,
        subject: subject(c),
        message: `backup ${subject(c)} failed: ${error}`,
      });
      return;
    }
    d.alerts.raise({
      kind: "backup_failed",
      app_slug: c.appSlug,
      subject: subject(c),
      message: `backup ${subject(c)} succeeded`,
      ok: true,
    });
    const fresh = d.repo.config(c.id);
    if (fresh) await applyRetention(d, fresh);
  };

  return {
    /** Whether a run of the config is in progress. */
    busy: (configId: number) => active.has(configId),

    /** Bytes stored so far by a running run, or null. */
    progress(runId: number): number | null {
      for (const a of active.values()) if (a.runId === runId) return a.progress;
      return null;
    },

    /** Start a run in the background; null when one of the config runs already. */
    start(c: ConfigRow, trigger: Trigger): RunRow | null {
      if (active.has(c.id)) return null;
      const run = d.repo.insertRun({
        configId: c.id,
        appSlug: c.appSlug,
        strategy: c.strategy,
        service: c.service,
        targetKind: c.targetKind,
        targetJson: c.targetJson,
        // the run keeps the secret it writes with: its archive stays reachable whatever becomes of the config
        secretEnc: c.targetKind === "s3" ? c.secretEnc : null,
        status: "running",
        trigger,
        startedAt: iso(d.clock.now()),
      });
      const a: Active = { runId: run.id, progress: 0, abort: new AbortController(), done: Promise.resolve() };
      active.set(c.id, a);
      a.done = execute(c, run, a)
        .catch((e) => d.log.error("backup run crashed", { run: run.id, error: (e as Error).message }))
        .finally(() => {
          a.release?.();
          active.delete(c.id);
        });
      return run;
    },

    /** Wait for a config's run in progress (tests, the CLI's wait). */
    wait: async (configId: number) => {
      await active.get(configId)?.done;
    },

    /** Cancel every run and wait until each is recorded as failed and its partial object gone. */
    async stop(): Promise<void> {
      const all = [...active.values()];
      for (const a of all) a.abort.abort();
      await Promise.all(all.map((a) => a.done));
    },
  };
}

/** The runner's type. */
export type Runner = ReturnType<typeof createRunner>;
