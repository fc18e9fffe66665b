/**
 * Postgres: `pg_dump -Fc` (custom format, uncompressed: the runner gzips once) of the database the official image's
 * environment names (POSTGRES_DB, POSTGRES_USER), restored with `pg_restore --clean --if-exists --single-transaction`
 * so a failed restore changes nothing. The password travels as PGPASSWORD in the exec's environment, never in argv.
 */
import type { BackupContainer, OpControl } from "../types";
import { type AppStrategy, envOf, execInput, execOutput, type StrategyDeps } from "./run";

/** The connection environment of pg tools for this container. */
export function pgEnv(c: BackupContainer): { env: string[]; database: string } {
  const user = envOf(c, "POSTGRES_USER") || "postgres";
  const database = envOf(c, "POSTGRES_DB") || user;
  const env = [`PGUSER=${user}`, `PGDATABASE=${database}`];
  const password = envOf(c, "POSTGRES_PASSWORD");
  if (password) env.push(`PGPASSWORD=${password}`);
  return { env, database };
}

/** The postgres strategy. */
export function postgresStrategy(deps: StrategyDeps): AppStrategy {
  return {
    id: "postgres",
    extension: ".pgdump.gz",
    needsStop: false,
    async dump(c: BackupContainer, ctl: OpControl) {
      const { env } = pgEnv(c);
      return execOutput(deps.engine, c, "pg_dump", ["pg_dump", "--format=custom", "--compress=0", "--no-password"], env, ctl);
    },
    async restore(c: BackupContainer, data: ReadableStream<Uint8Array>, ctl: OpControl) {
      const { env, database } = pgEnv(c);
      const cmd = ["pg_restore", "--clean", "--if-exists", "--single-transaction", "--no-password", "--dbname", database];
      await execInput(deps.engine, c, "pg_restore", cmd, env, data, ctl);
    },
  };
}
