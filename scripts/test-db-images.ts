/**
 * Database test images for the backup strategy tests, built without a registry: the host's Debian binaries (Postgres
 * 15, MariaDB 10.11, Redis 7, sqlite3) with their shared-library closure (ldd) and the loader copied into a busybox
 * rootfs, then `docker import`. Built only when a test asks (`ensureDbImage`), kept once present.
 * Host packages: postgresql-15, mariadb-server-core, mariadb-client, redis-tools, sqlite3 (.ci/run installs them).
 * Usage: bun scripts/test-db-images.ts [postgres|mariadb|redis|sqlite|sqlite-app|distroless ...] [--force]
 */
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { imageId, importRootfs, makeRootfs } from "./test-images";

/** The database test images by kind. */
export const DB_IMAGES = {
  postgres: "sundeck-test/postgres:15",
  mariadb: "sundeck-test/mariadb:10.11",
  redis: "sundeck-test/redis:7",
  sqlite: "sundeck-test/sqlite:3",
  /** The sqlite image with the backup labels its author would set: the strategy, and the database at /data/app.db. */
  "sqlite-app": "sundeck-test/sqlite-app:3",
  /** One static binary and nothing else: no shell, no tar (the volume strategy must still work). */
  distroless: "sundeck-test/distroless:latest",
} as const;
export type DbImageKind = keyof typeof DB_IMAGES;

const PG = "/usr/lib/postgresql/15";

// As the official images do: VAR unset and VAR_FILE set -> VAR is the file's content.
const FILE_ENV = `file_env() {
  eval "v=\\\${$1:-}; f=\\\${$1_FILE:-}"
  if [ -z "$v" ] && [ -n "$f" ]; then v="$(cat "$f")"; export "$1=$v"; fi
}
`;

const PG_ENTRY = `#!/bin/sh
set -e
export PATH=${PG}/bin:$PATH
${FILE_ENV}for v in POSTGRES_PASSWORD POSTGRES_USER POSTGRES_DB; do file_env $v; done
: "\${POSTGRES_USER:=postgres}"
: "\${POSTGRES_DB:=$POSTGRES_USER}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  printf '%s\\n' "$POSTGRES_PASSWORD" > /tmp/pw
  # POSTGRES_INITDB_ARGS as the official image takes it (e.g. --auth-local=scram-sha-256: passwords on the socket too)
  initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile=/tmp/pw --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C --no-sync $POSTGRES_INITDB_ARGS >/dev/null
  rm -f /tmp/pw
  # a test image: durability is not what the tests are about, speed is
  printf "listen_addresses='*'\\nfsync=off\\nsynchronous_commit=off\\n" >> "$PGDATA/postgresql.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    echo "CREATE DATABASE \\"$POSTGRES_DB\\";" | postgres --single -D "$PGDATA" -j postgres >/dev/null
  fi
fi
exec postgres -D "$PGDATA"
`;

// The datadir is initialised at build time (mariadb-install-db on the host); the init file sets the root password and
// the database from the environment at every start (idempotent statements).
const MARIADB_ENTRY = `#!/bin/sh
set -e
${FILE_ENV}for v in MARIADB_ROOT_PASSWORD MYSQL_ROOT_PASSWORD MARIADB_DATABASE MYSQL_DATABASE MARIADB_USER MYSQL_USER MARIADB_PASSWORD MYSQL_PASSWORD; do
  file_env $v
done
pw="\${MARIADB_ROOT_PASSWORD:-$MYSQL_ROOT_PASSWORD}"
db="\${MARIADB_DATABASE:-$MYSQL_DATABASE}"
{
  echo "ALTER USER 'root'@'localhost' IDENTIFIED BY '$pw';"
  echo "CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY '$pw';"
  echo "GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;"
  if [ -n "$db" ]; then echo "CREATE DATABASE IF NOT EXISTS \\\`$db\\\`;"; fi
  user="\${MARIADB_USER:-$MYSQL_USER}"
  upw="\${MARIADB_PASSWORD:-$MYSQL_PASSWORD}"
  if [ -n "$user" ]; then
    echo "CREATE USER IF NOT EXISTS '$user'@'%' IDENTIFIED BY '$upw';"
    echo "GRANT ALL ON \\\`$db\\\`.* TO '$user'@'%';"
  fi
} > /tmp/init.sql
mkdir -p /run/mysqld
exec mariadbd --no-defaults --user=root --datadir=/var/lib/mysql --socket=/run/mysqld/mysqld.sock \\
  --bind-address=0.0.0.0 --skip-name-resolve --lc-messages-dir=/usr/share/mysql --init-file=/tmp/init.sql
`;

const SLEEPER = `#!/bin/sh
trap 'exit 0' TERM INT
while :; do sleep 1 & wait $!; done
`;

interface DbSpec {
  /** Host files that must exist, and the package that brings them. */
  needs: Array<[string, string]>;
  changes: string[];
  fill: (root: string) => Promise<void> | void;
}

/** The sqlite images' rootfs (one function, so its source is in the recipe hash of both). */
function fillSqlite(root: string): void {
  copyClosure(root, ["/usr/bin/sqlite3"]);
  mkdirSync(join(root, "data"), { recursive: true });
  entry(root, SLEEPER);
}

const SPECS: Record<DbImageKind, DbSpec> = {
  postgres: {
    needs: [[`${PG}/bin/postgres`, "postgresql-15"]],
    changes: [
      "USER postgres",
      "ENV PGDATA=/var/lib/postgresql/data",
      `ENV PATH=${PG}/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin`,
      'CMD ["/entry.sh"]',
      "EXPOSE 5432",
    ],
    fill: (root) => {
      cpSync(`${PG}/lib`, join(root, PG, "lib"), { recursive: true, dereference: true });
      cpSync("/usr/share/postgresql/15", join(root, "usr/share/postgresql/15"), { recursive: true, dereference: true });
      cpSync("/usr/share/zoneinfo", join(root, "usr/share/zoneinfo"), { recursive: true, dereference: true });
      const bins = ["postgres", "initdb", "pg_ctl", "psql", "pg_dump", "pg_restore", "pg_isready"].map((b) => `${PG}/bin/${b}`);
      copyClosure(root, bins);
      addUser(root, "postgres", 999);
      for (const d of ["var/lib/postgresql/data", "var/run/postgresql"]) {
        mkdirSync(join(root, d), { recursive: true });
        chownTree(join(root, d), 999);
      }
      chmodSync(join(root, "var/lib/postgresql/data"), 0o700);
      entry(root, PG_ENTRY);
    },
  },
  mariadb: {
    needs: [
      ["/usr/sbin/mariadbd", "mariadb-server-core"],
      ["/usr/bin/mariadb-dump", "mariadb-client"],
    ],
    changes: ['CMD ["/entry.sh"]', "EXPOSE 3306"],
    fill: async (root) => {
      copyClosure(root, ["/usr/sbin/mariadbd", "/usr/bin/mariadb", "/usr/bin/mariadb-dump"]);
      for (const [l, t] of [
        ["mysql", "mariadb"],
        ["mysqldump", "mariadb-dump"],
      ]) {
        copyFileSync(join(root, "usr/bin", t), join(root, "usr/bin", l));
      }
      cpSync("/usr/share/mysql", join(root, "usr/share/mysql"), { recursive: true, dereference: true });
      addUser(root, "mysql", 999);
      const datadir = join(root, "var/lib/mysql");
      mkdirSync(datadir, { recursive: true });
      const p = Bun.spawn(
        [
          "mariadb-install-db",
          "--no-defaults",
          "--user=root",
          `--datadir=${datadir}`,
          "--auth-root-authentication-method=normal",
          "--skip-test-db",
        ],
        { stdout: "pipe", stderr: "pipe" },
      );
      const [code, err] = await Promise.all([p.exited, new Response(p.stderr).text()]);
      if (code !== 0) throw new Error(`mariadb-install-db failed: ${err.trim().slice(-2000)}`);
      entry(root, MARIADB_ENTRY);
    },
  },
  redis: {
    needs: [
      ["/usr/bin/redis-check-rdb", "redis-tools"],
      ["/usr/bin/redis-cli", "redis-tools"],
    ],
    changes: ["WORKDIR /data", 'CMD ["redis-server", "--protected-mode", "no"]', "EXPOSE 6379"],
    fill: (root) => {
      copyClosure(root, ["/usr/bin/redis-check-rdb", "/usr/bin/redis-cli"]);
      // Debian ships the server as redis-check-rdb; the binary picks its role from argv[0]
      copyFileSync(join(root, "usr/bin/redis-check-rdb"), join(root, "usr/bin/redis-server"));
      chmodSync(join(root, "usr/bin/redis-server"), 0o755);
      mkdirSync(join(root, "data"), { recursive: true });
    },
  },
  sqlite: {
    needs: [["/usr/bin/sqlite3", "sqlite3"]],
    changes: ["WORKDIR /data", 'CMD ["/entry.sh"]'],
    fill: fillSqlite,
  },
  "sqlite-app": {
    needs: [["/usr/bin/sqlite3", "sqlite3"]],
    changes: ["WORKDIR /data", 'CMD ["/entry.sh"]', "LABEL sundeck.backup.strategy=sqlite sundeck.backup.path=/data/app.db"],
    fill: fillSqlite,
  },
  distroless: {
    needs: [],
    changes: ['CMD ["/pause", "sleep", "100000"]'],
    fill: () => {},
  },
};

const building = new Map<DbImageKind, Promise<string>>();
const RECIPE_LABEL = "io.sundeck.test.recipe";

async function labelOf(ref: string, label: string): Promise<string> {
  const p = Bun.spawn(["docker", "image", "inspect", "--format", `{{index .Config.Labels "${label}"}}`, ref], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = await new Response(p.stdout).text();
  await p.exited;
  return out.trim();
}

/** Build the image of `kind` unless it is present (or `force`); resolves to its reference. Once per process. */
export function ensureDbImage(kind: DbImageKind, opts: { force?: boolean } = {}): Promise<string> {
  let p = building.get(kind);
  if (!p || opts.force) {
    p = build(kind, Boolean(opts.force));
    building.set(kind, p);
    p.catch(() => building.delete(kind));
  }
  return p;
}

async function build(kind: DbImageKind, force: boolean): Promise<string> {
  const ref = DB_IMAGES[kind];
  const spec = SPECS[kind];
  // an image built from an older recipe (another entry script) is rebuilt: the recipe's hash is a label of the image
  const recipe = Bun.hash(JSON.stringify(spec.changes) + spec.fill.toString() + PG_ENTRY + MARIADB_ENTRY + SLEEPER).toString(16);
  const previous = await imageId(ref);
  if (previous && !force && (await labelOf(ref, RECIPE_LABEL)) === recipe) return ref;
  for (const [file, pkg] of spec.needs) {
    if (!existsSync(file)) throw new Error(`${file} not found: install the Debian package ${pkg} to build ${ref}`);
  }
  const root = mkdtempSync(join(tmpdir(), "sundeck-dbroot-"));
  try {
    if (kind === "distroless") {
      copyFileSync("/bin/busybox", join(root, "pause"));
      chmodSync(join(root, "pause"), 0o755);
      mkdirSync(join(root, "tmp"), { recursive: true });
    } else {
      makeRootfs(root);
    }
    await spec.fill(root);
    await importRootfs(root, ref, [...spec.changes, `LABEL ${RECIPE_LABEL}=${recipe}`], true);
    if (previous) Bun.spawnSync(["docker", "image", "rm", previous]);
    return ref;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Copy executables and every shared library they load (ldd), the loader included, to the same paths in `root`. */
function copyClosure(root: string, files: string[]): void {
  const todo = new Set<string>();
  for (const f of files) {
    todo.add(f);
    const out = Bun.spawnSync(["ldd", f]).stdout.toString();
    for (const line of out.split("\n")) {
      const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
      if (m) todo.add(m[1]);
      if (/not found/.test(line)) throw new Error(`${f}: ${line.trim()}`);
    }
  }
  for (const f of todo) {
    const to = join(root, f);
    mkdirSync(dirname(to), { recursive: true });
    writeFileSync(to, readFileSync(f));
    chmodSync(to, 0o755);
  }
}

function entry(root: string, script: string): void {
  writeFileSync(join(root, "entry.sh"), script);
  chmodSync(join(root, "entry.sh"), 0o755);
}

function addUser(root: string, name: string, uid: number): void {
  writeFileSync(
    join(root, "etc/passwd"),
    `${readFileSync(join(root, "etc/passwd"), "utf8")}${name}:x:${uid}:${uid}:${name}:/tmp:/bin/sh\n`,
  );
  writeFileSync(join(root, "etc/group"), `${readFileSync(join(root, "etc/group"), "utf8")}${name}:x:${uid}:\n`);
}

function chownTree(path: string, uid: number): void {
  Bun.spawnSync(["chown", "-R", `${uid}:${uid}`, path]);
}

if (import.meta.main) {
  const kinds = process.argv.slice(2).filter((a) => !a.startsWith("--")) as DbImageKind[];
  for (const kind of kinds.length ? kinds : (Object.keys(DB_IMAGES) as DbImageKind[])) {
    const t = performance.now();
    try {
      await ensureDbImage(kind, { force: process.argv.includes("--force") });
      console.log(`test image ${DB_IMAGES[kind]}: ready in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    } catch (e) {
      console.error(`test-db-images: ${(e as Error).message}`);
      process.exit(1);
    }
  }
}
