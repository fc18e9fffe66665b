/**
 * Postgres: `pg_dump -Fc` (custom format, uncompressed: the runner gzips once) of the database the official image's
 * environment names (POSTGRES_DB, POSTGRES_USER), restored with `pg_restore --clean --if-exists --single-transaction`
 * so a failed restore changes nothing. The password (POSTGRES_PASSWORD, else the file POSTGRES_PASSWORD_FILE names,
 * read in the container) travels as PGPASSWORD in the exec's environment, never in argv.
 */
import type { BackupContainer, OpControl } from "../types";
import { type AppStrategy, envOf, execInput, execOutput, type StrategyDeps } from "./run";
import { secretOf, withSecret } from "./secret";

/** A pg tool's command (given the database) and its environment for this container: user, database, password. */
export function pgCommand(c: BackupContainer, tool: (database: string) => string[]): { cmd: string[]; env: string[] } {
  const user = envOf(c, "POSTGRES_USER") || "postgres";
  const database = envOf(c, "POSTGRES_DB") || user;
  const env = [`PGUSER=${user}`, `PGDATABASE=${database}`];
  return withSecret(tool(database), env, "PGPASSWORD", secretOf(c, "POSTGRES_PASSWORD"));
}

/** The postgres strategy. */
export function postgresStrategy(deps: StrategyDeps): AppStrategy {
  return {
    id: "postgres",
    extension: ".pgdump.gz",
    needsStop: false,
    async dump(c: BackupContainer, ctl: OpControl) {
      const { cmd, env } = pgCommand(c, () => ["pg_dump", "--format=custom", "--compress=0", "--no-password"]);
      return execOutput(deps.engine, c, "pg_dump", cmd, env, ctl);
    },
    async restore(c: BackupContainer, data: ReadableStream<Uint8Array>, ctl: OpControl) {
      const { cmd, env } = pgCommand(c, (database) => [
        "pg_restore",
        "--clean",
        "--if-exists",
        "--single-transaction",
        "--no-password",
        "--dbname",
        database,
      ]);
      await execInput(deps.engine, c, "pg_restore", cmd, env, data, ctl);
    },
  };
}
