/**
 * MySQL and MariaDB: `mariadb-dump` (or `mysqldump` where that is what the image has) with `--single-transaction`
 * (a consistent InnoDB snapshot without locking), routines, triggers and events; restored by piping the SQL into
 * `mariadb` / `mysql`. Root's password from MARIADB_ROOT_PASSWORD / MYSQL_ROOT_PASSWORD dumps every database; without
 * it, MYSQL_USER / MYSQL_PASSWORD dump MYSQL_DATABASE. Each password may instead be in the file its `*_FILE` variable
 * names (read in the container). The password travels as MYSQL_PWD in the exec's environment, never in argv.
 */
import type { BackupContainer, OpControl } from "../types";
import { type AppStrategy, execInput, execOk, execOutput, firstEnv, type StrategyDeps, StrategyError } from "./run";
import { type Secret, secretOf, withSecret } from "./secret";

interface Login {
  user: string;
  password: Secret | null;
  /** The database to dump, or null for all of them (root). */
  database: string | null;
}

/** Who the dump logs in as, from the official images' environment. */
export function mysqlLogin(c: BackupContainer): Login {
  const rootPw = secretOf(c, "MARIADB_ROOT_PASSWORD", "MYSQL_ROOT_PASSWORD");
  const emptyRoot = firstEnv(c, "MARIADB_ALLOW_EMPTY_ROOT_PASSWORD", "MYSQL_ALLOW_EMPTY_PASSWORD");
  const database = firstEnv(c, "MARIADB_DATABASE", "MYSQL_DATABASE") ?? null;
  if (rootPw || emptyRoot) return { user: "root", password: rootPw, database: null };
  const user = firstEnv(c, "MARIADB_USER", "MYSQL_USER");
  if (!user || !database) {
    throw new StrategyError(
      "mysql: no credentials in the container's environment (MARIADB_ROOT_PASSWORD / MYSQL_ROOT_PASSWORD or their _FILE, or MYSQL_USER, MYSQL_PASSWORD and MYSQL_DATABASE)",
    );
  }
  return { user, password: secretOf(c, "MARIADB_PASSWORD", "MYSQL_PASSWORD"), database };
}

/** The first of the MariaDB or MySQL names of a client the image has. */
async function tool(deps: StrategyDeps, c: BackupContainer, names: string[]): Promise<string> {
  for (const n of names) if (await execOk(deps.engine, c, [n, "--version"])) return n;
  throw new StrategyError(`mysql: none of ${names.join(", ")} is in the container`);
}

/** The mysql strategy (MySQL, MariaDB, Percona). */
export function mysqlStrategy(deps: StrategyDeps): AppStrategy {
  return {
    id: "mysql",
    extension: ".sql.gz",
    needsStop: false,
    async dump(c: BackupContainer, ctl: OpControl) {
      const login = mysqlLogin(c);
      const bin = await tool(deps, c, ["mariadb-dump", "mysqldump"]);
      const argv = [bin, `--user=${login.user}`, "--single-transaction", "--routines", "--triggers", "--hex-blob"];
      if (login.database) argv.push("--databases", login.database);
      else argv.push("--events", "--all-databases");
      const { cmd, env } = withSecret(argv, [], "MYSQL_PWD", login.password);
      return execOutput(deps.engine, c, bin, cmd, env, ctl);
    },
    async restore(c: BackupContainer, data: ReadableStream<Uint8Array>, ctl: OpControl) {
      const login = mysqlLogin(c);
      const bin = await tool(deps, c, ["mariadb", "mysql"]);
      // the dump names its databases (CREATE DATABASE / USE), so no database is given here
      const { cmd, env } = withSecret([bin, `--user=${login.user}`], [], "MYSQL_PWD", login.password);
      await execInput(deps.engine, c, bin, cmd, env, data, ctl);
    },
  };
}
