/**
 * The backups domain service (`ctx.backups`): configs, runs (now, scheduled, missed), downloads, restores from a run
 * or an upload, and the start and stop of the background work: recovery of what a killed process left running,
 * the temp sweep, the schedules, missed runs.
 */
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { randomHex } from "../../lib/crypto";
import { badRequest, conflict, HttpError, notFound } from "../../lib/errors";
import { iso } from "../../lib/time";
import type { BackupRestore, BackupRun, DetectedStrategy } from "../../shared/backups";
import { SECRET_MASK } from "../../shared/webhooks";
import type { Actor } from "../activity/model";
import type { Activity } from "../activity/service";
import { createConfigs } from "./configs";
import { type BackupDeps, specOf } from "./deps";
import { checkTarget, isStrategy, type TargetInput } from "./model";
import type { RestoreRow, RunRow } from "./repo";
import { createRestorer, needsStop, type Opener, RETRY_AFTER_S, STOP_STRATEGIES } from "./restore";
import { createRunner } from "./runner";
import { createScheduler } from "./scheduler";
import { volumeShape, volumeUpload } from "./strategies/volume-layout";
import { uploadTarget } from "./upload-target";

/** Interrupted work is recorded with this error. */
export const INTERRUPTED = "interrupted: the server stopped";
/** A presigned download URL lives this long. */
const PRESIGN_S = 300;

/**
 * The containers an interrupted restore may have stopped: the ids it wrote before each stop, or (rows from before it
 * wrote them) the one container it names when its strategy stops the service.
 */
export function stoppedBy(r: RestoreRow): string[] {
  if (r.stoppedContainers !== null) {
    try {
      const ids = JSON.parse(r.stoppedContainers);
      if (Array.isArray(ids)) return ids.filter((x): x is string => typeof x === "string" && x.length > 0);
    } catch {
      // an unreadable list: the column below is all there is
    }
  }
  return STOP_STRATEGIES.has(r.strategy) && r.container ? [r.container] : [];
}

/** Build the service. */
export function createBackups(d: BackupDeps & { activity: Activity; sweepLocal?: () => Promise<number> }) {
  // work that starts while recovery runs (a request right after the API listens) waits for it: the sweep must not
  // take a fresh run's temp file, and recovery must not take a fresh run for an interrupted one
  let recovered: Promise<void> = Promise.resolve();
  const runner = createRunner({ ...d, ready: () => recovered });
  const restorer = createRestorer({ ...d, ready: () => recovered });
  const scheduler = createScheduler({
    repo: d.repo,
    clock: d.clock,
    log: d.log,
    // a removed app's configs stay (their archives are still restorable by id) but are not run
    fire: (c, t) => (c.appSlug === null || d.services(c.appSlug) !== null) && runner.start(c, t) !== null,
    // a missed or skipped due time is a backup that did not happen: the alert fires (the next success resolves it)
    missed: (c, due, why) => {
      if (c.appSlug !== null && d.services(c.appSlug) === null) return;
      const subject = `${c.appSlug ?? "sundeck"}/${c.service ?? "state"} ${c.strategy}`;
      d.alerts.raise({
        kind: "backup_failed",
        app_slug: c.appSlug,
        subject,
        message: `scheduled backup ${subject} of ${due} ${why}`,
      });
    },
  });
  const configs = createConfigs({ ...d, nextRunAt: (r) => scheduler.nextRunAt(r), changed: (id) => scheduler.reload(id) });

  const runJson = (r: RunRow): BackupRun => ({
    id: r.id,
    config_id: r.configId,
    strategy: r.strategy,
    service: r.service,
    status: r.status as BackupRun["status"],
    trigger: r.trigger as BackupRun["trigger"],
    size_bytes: r.sizeBytes,
    sha256: r.sha256,
    progress_bytes: r.status === "running" ? (runner.progress(r.id) ?? 0) : null,
    target_kind: r.targetKind === "s3" ? "s3" : "local",
    started_at: r.startedAt,
    finished_at: r.finishedAt,
    error: r.error,
  });
  const restoreJson = (r: RestoreRow): BackupRestore => ({
    id: r.id,
    run_id: r.runId,
    strategy: r.strategy,
    service: r.service,
    container: r.container,
    status: r.status as BackupRestore["status"],
    bytes: r.bytes,
    started_at: r.startedAt,
    finished_at: r.finishedAt,
    error: r.error,
  });
  /**
   * The secret of a run's target: the one the run wrote with (sealed on the run), else (runs written before runs kept
   * theirs) its config's while the config still writes to the same place.
   */
  const runSecret = (r: RunRow): string | null => {
    if (r.targetKind !== "s3") return null;
    if (r.secretEnc) return d.secrets.open(r.secretEnc);
    const c = r.configId ? d.repo.config(r.configId) : undefined;
    if (!c?.secretEnc || c.targetKind !== "s3" || c.targetJson !== r.targetJson) {
      throw conflict("the s3 credentials of this run's target are gone with its config");
    }
    return d.secrets.open(c.secretEnc);
  };
  const runTarget = (r: RunRow) => d.target(specOf(r.targetKind, r.targetJson), runSecret(r));
  const stored = (id: number): RunRow => {
    const r = d.repo.run(id);
    if (!r) throw notFound();
    return r;
  };
  const strategyOf = (id: string) => {
    const s = isStrategy(id) ? d.strategy(id) : null;
    if (!s) throw badRequest(`strategy: ${id} is not available`);
    return s;
  };
  const uploadsDir = () => join(d.tmpDir, "uploads");
  /** Apps an upload-restore body is being received for. */
  const receiving = new Set<string>();

  /** Record interrupted runs and restores as failed, remove their partial objects, start containers a restore stopped. */
  const recover = async () => {
    // read at once, before any await: rows made after this are not interrupted ones
    const runs = d.repo.runsIn("running");
    const restores = d.repo.restoresIn("running");
    rmSync(uploadsDir(), { recursive: true, force: true });
    for (const r of runs) {
      d.repo.updateRun(r.id, {
        status: "failed",
        error: INTERRUPTED,
        finishedAt: iso(d.clock.now()),
        sizeBytes: null,
        sha256: null,
      });
      if (r.location) {
        await Promise.resolve()
          .then(() => runTarget(r).delete(r.location!))
          .catch((e) =>
            d.log.warn("could not remove an interrupted backup's object", { run: r.id, error: (e as Error).message }),
          );
      }
      d.log.warn("backup run interrupted by a stop; marked failed", { run: r.id, app: r.appSlug });
    }
    for (const r of restores) {
      d.repo.updateRestore(r.id, { status: "failed", error: INTERRUPTED, finishedAt: iso(d.clock.now()) });
      // every container the restore stopped is started again, unless the app is meant to be stopped
      if (!d.appStopped?.(r.appSlug)) {
        for (const id of stoppedBy(r)) {
          const c = { id, name: id, service: r.service ?? "", image: "", env: [], mounts: [] };
          await d.containers.start(c).catch((e) =>
            d.log.error("could not start a container an interrupted restore stopped", {
              restore: r.id,
              container: id,
              error: (e as Error).message,
            }),
          );
        }
      }
      d.log.warn("restore interrupted by a stop; marked failed", { restore: r.id, app: r.appSlug });
    }
    if (d.sweepLocal)
      await d.sweepLocal().catch((e) => d.log.warn("local backup temp sweep failed", { error: (e as Error).message }));
  };

  return {
    configs,
    /** For tests and the CLI: wait for a config's run, or a restore, to finish. */
    waitRun: (configId: number) => runner.wait(configId),
    waitRestore: (id: number) => restorer.wait(id),

    /** What the app's services hold (detection), or an empty list when detection is not built. */
    detected: async (slug: string): Promise<DetectedStrategy[]> => {
      if (d.services(slug) === null) throw notFound();
      return d.detect ? d.detect(slug) : [];
    },

    /** Start a run of a config now; 409 while one runs. */
    runNow(configId: number, actor: Actor): { run_id: number } {
      const c = configs.row(configId);
      const run = runner.start(c, "manual");
      if (!run) throw conflict("a run of this config is in progress");
      d.activity.record({
        actor,
        category: "backup",
        action: "run_started",
        target: c.appSlug === null ? "sundeck state" : `${c.service} ${c.strategy}`,
        appSlug: c.appSlug,
        summary: `${actor.name} started backup run ${run.id} of config ${c.id} (${c.service ?? "sundeck"}, ${c.strategy})`,
      });
      return { run_id: run.id };
    },

    /**
     * Check a target works (write, read back, delete a probe): `{ok, error}`, the error naming the step that failed.
     * An S3 secret left out (or masked) is taken from `configId`'s config, so a stored target is tested as stored.
     */
    async testTarget(input: TargetInput, configId?: number): Promise<{ ok: boolean; error: string }> {
      let secret = input.kind === "s3" ? input.secret_key || null : null;
      if (input.kind === "s3" && (secret === null || secret === SECRET_MASK) && configId !== undefined) {
        const c = configs.row(configId);
        try {
          secret = c.secretEnc ? d.secrets.open(c.secretEnc) : null;
        } catch {
          throw badRequest("target.secret_key: the stored secret cannot be opened (master_secret changed?): send it again");
        }
      }
      const spec = checkTarget(input, secret);
      try {
        await d.target(spec, secret).test();
        return { ok: true, error: "" };
      } catch (e) {
        return { ok: false, error: (e as Error).message };
      }
    },

    runRow: stored,
    restoreRow(id: number): RestoreRow {
      const r = d.repo.restore(id);
      if (!r) throw notFound();
      return r;
    },

    runs: (slug: string, limit: number) => d.repo.runs(slug, limit).map(runJson),
    restores: (slug: string, limit: number) => d.repo.restores(slug, limit).map(restoreJson),

    /** A stored archive: streamed (local) with its length and a file name, or a redirect to a presigned URL (s3). */
    async download(id: number): Promise<Response> {
      const r = stored(id);
      if (r.status !== "succeeded" || !r.location) throw conflict("this run has no stored archive");
      const target = runTarget(r);
      const url = target.presign(r.location, PRESIGN_S);
      if (url) return new Response(null, { status: 302, headers: { location: url, "cache-control": "no-store" } });
      const name = r.location.split("/").pop() ?? `backup-${r.id}.gz`;
      return new Response(await target.get(r.location), {
        headers: {
          "content-type": "application/gzip",
          "content-length": String(r.sizeBytes ?? 0),
          "content-disposition": `attachment; filename="${name.replace(/[^\w.-]/g, "_")}"`,
          "cache-control": "no-store",
        },
      });
    },

    /** Restore a stored run into its service's running container. The archive is vetted in the background first. */
    async restoreRun(id: number, actor: Actor): Promise<{ restore_id: number }> {
      const r = stored(id);
      if (r.status !== "succeeded" || !r.location || !r.appSlug) throw conflict("this run has no stored archive to restore");
      const strategy = strategyOf(r.strategy);
      const open: Opener = restorer.openRun(r, runSecret(r));
      const release = restorer.admit();
      try {
        const container = await d.containers.find(r.appSlug, r.service ?? "", { stopped: needsStop(strategy) }).catch((e) => {
          throw e instanceof HttpError ? e : conflict((e as Error).message);
        });
        // the archive must be what the run stored: checked before anything is touched, and again as it is restored
        const expect = r.sha256 && r.sizeBytes !== null ? { size: r.sizeBytes, sha256: r.sha256 } : null;
        const row = restorer.start({ slug: r.appSlug, strategy, container, runId: r.id, open, expect }, release, actor);
        return { restore_id: row.id };
      } catch (e) {
        release();
        throw e;
      }
    },

    /**
     * Restore an uploaded archive: `spool` writes the body's file to a 0600 temp file and returns the form's fields;
     * the archive is vetted in full (a refusal is a 400 naming the entry, with nothing extracted), then restored in the
     * background. The temp file goes when the restore ends, or at once on a refusal.
     */
    async uploadRestore(
      slug: string,
      spool: (dest: string) => Promise<{ fields: Record<string, string>; fileBytes: number | null }>,
      actor: Actor,
    ) {
      if (d.services(slug) === null) throw notFound();
      // no slot is held while a body arrives (a slow client would keep restores out): a full server answers 429
      // before the body is read, the slot is taken once it is here; one body per app is received at a time
      restorer.room();
      if (receiving.has(slug)) {
        throw new HttpError(429, `an upload to ${slug} is already being received`, { "retry-after": String(RETRY_AFTER_S) });
      }
      receiving.add(slug);
      let release = () => {};
      mkdirSync(uploadsDir(), { recursive: true, mode: 0o700 });
      const temp = join(uploadsDir(), `upload-${randomHex(8)}.bin`);
      let started = false;
      try {
        const { fields, fileBytes } = await spool(temp).finally(() => receiving.delete(slug));
        release = restorer.admit();
        if (fileBytes === null) throw badRequest("file is required");
        if (!fields.strategy) throw badRequest("strategy is required");
        const strategy = strategyOf(fields.strategy);
        const open: Opener = async () => Bun.file(temp).stream();
        // the archive is judged before anything else is touched: a hostile one is a 400 naming its entry; a volume
        // archive's names say its layout, judged against the container's mounts once it is known
        const shape = strategy.id === "volume" ? volumeShape() : null;
        await restorer.vet(strategy.id, open, shape?.add);
        const container = fields.container
          ? await d.containers.byName(slug, fields.container)
          : await uploadTarget(d, slug, strategy.id, needsStop(strategy));
        const { mount } = shape ? volumeUpload(shape.shape, container) : {};
        const row = restorer.start({ slug, strategy, container, runId: null, open, temp, mount }, release, actor);
        started = true;
        return { restore_id: row.id };
      } finally {
        if (!started) {
          release();
          rmSync(temp, { force: true });
        }
      }
    },

    /** Recovery, the temp sweep, the schedules, and missed runs once. */
    async start(): Promise<void> {
      recovered = recover();
      await recovered;
      scheduler.start();
      const missed = scheduler.runMissed();
      if (missed.length) d.log.info("running missed scheduled backups once", { configs: missed });
    },

    /** Recovery alone (tests of a restart without timers). */
    recover: () => (recovered = recover()),
    /** Missed runs alone (tests with a fake clock). */
    runMissed: () => scheduler.runMissed(),

    /** Stop the schedules and cancel running work; each is recorded as failed and its partial object removed. */
    async stop(): Promise<void> {
      scheduler.stop();
      await Promise.all([runner.stop(), restorer.stop()]);
    },

    /** Temp files in the uploads dir (tests check nothing is left). */
    uploads: (): string[] => {
      try {
        return readdirSync(uploadsDir());
      } catch {
        return [];
      }
    },
  };
}

/** The service's type (`ctx.backups`). */
export type Backups = ReturnType<typeof createBackups>;
