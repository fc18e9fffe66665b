/** Backup configs, runs and restores in SQLite. No rules here: the service decides, the repository stores. */
import { and, asc, desc, eq, isNotNull, lt } from "drizzle-orm";
import type { Db } from "../../db";
import { backupConfigs, backupRestores, backupRuns } from "../../db/schema";

export type ConfigRow = typeof backupConfigs.$inferSelect;
export type RunRow = typeof backupRuns.$inferSelect;
export type RestoreRow = typeof backupRestores.$inferSelect;
export type NewConfig = Omit<typeof backupConfigs.$inferInsert, "id">;
export type NewRun = Omit<typeof backupRuns.$inferInsert, "id">;
export type NewRestore = Omit<typeof backupRestores.$inferInsert, "id">;

/** Build the repository. */
export function createBackupRepo(db: Db) {
  const o = db.orm;
  return {
    configs: (appSlug: string): ConfigRow[] =>
      o.select().from(backupConfigs).where(eq(backupConfigs.appSlug, appSlug)).orderBy(asc(backupConfigs.id)).all(),

    allConfigs: (): ConfigRow[] => o.select().from(backupConfigs).orderBy(asc(backupConfigs.id)).all(),

    config: (id: number): ConfigRow | undefined => o.select().from(backupConfigs).where(eq(backupConfigs.id, id)).get(),

    insertConfig: (row: NewConfig): ConfigRow => o.insert(backupConfigs).values(row).returning().get(),

    updateConfig: (id: number, set: Partial<NewConfig>): ConfigRow =>
      o.update(backupConfigs).set(set).where(eq(backupConfigs.id, id)).returning().get(),

    removeConfig: (id: number): void => {
      o.delete(backupConfigs).where(eq(backupConfigs.id, id)).run();
    },

    insertRun: (row: NewRun): RunRow => o.insert(backupRuns).values(row).returning().get(),

    updateRun: (id: number, set: Partial<NewRun>): void => {
      o.update(backupRuns).set(set).where(eq(backupRuns.id, id)).run();
    },

    run: (id: number): RunRow | undefined => o.select().from(backupRuns).where(eq(backupRuns.id, id)).get(),

    removeRun: (id: number): void => {
      o.delete(backupRuns).where(eq(backupRuns.id, id)).run();
    },

    /** An app's runs, newest first. */
    runs: (appSlug: string, limit: number): RunRow[] =>
      o.select().from(backupRuns).where(eq(backupRuns.appSlug, appSlug)).orderBy(desc(backupRuns.id)).limit(limit).all(),

    /** Runs of a status (recovery reads the `running` ones). */
    runsIn: (status: string): RunRow[] => o.select().from(backupRuns).where(eq(backupRuns.status, status)).all(),

    /** A config's succeeded runs with a stored archive, newest first (retention reads them). */
    kept: (configId: number): RunRow[] =>
      o
        .select()
        .from(backupRuns)
        .where(and(eq(backupRuns.configId, configId), eq(backupRuns.status, "succeeded"), isNotNull(backupRuns.location)))
        .orderBy(desc(backupRuns.id))
        .all(),

    /** Failed runs of a config older than `beforeIso` (aged out with the succeeded ones). */
    failedBefore: (configId: number, beforeIso: string): RunRow[] =>
      o
        .select()
        .from(backupRuns)
        .where(and(eq(backupRuns.configId, configId), eq(backupRuns.status, "failed"), lt(backupRuns.startedAt, beforeIso)))
        .all(),

    insertRestore: (row: NewRestore): RestoreRow => o.insert(backupRestores).values(row).returning().get(),

    updateRestore: (id: number, set: Partial<NewRestore>): void => {
      o.update(backupRestores).set(set).where(eq(backupRestores.id, id)).run();
    },

    restore: (id: number): RestoreRow | undefined => o.select().from(backupRestores).where(eq(backupRestores.id, id)).get(),

    /** An app's restores, newest first. */
    restores: (appSlug: string, limit: number): RestoreRow[] =>
      o
        .select()
        .from(backupRestores)
        .where(eq(backupRestores.appSlug, appSlug))
        .orderBy(desc(backupRestores.id))
        .limit(limit)
        .all(),

    restoresIn: (status: string): RestoreRow[] => o.select().from(backupRestores).where(eq(backupRestores.status, status)).all(),
  };
}

/** The repository's type. */
export type BackupRepo = ReturnType<typeof createBackupRepo>;
