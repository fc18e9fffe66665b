/**
 * Catalog look-alike images for the template tests on the real engine (no registry is reachable): for a template the
 * suite can run locally, an image that behaves like the official one for what the template's compose file uses (its
 * environment, the healthcheck command, the data path, the port), built `FROM` a local test image
 * (scripts/test-images.ts, scripts/test-db-images.ts: busybox and the host's Postgres 15, MariaDB 10.11, Redis 7) and
 * labelled `sundeck.test-image=1` with the reference it stands for. The catalog's references are read from its YAML,
 * never written here.
 *
 * A look-alike is kept as `sundeck-test/lookalike-<template>:latest` (rebuilt when its recipe or its base changes).
 * The catalog's own reference (`postgres:16.6-alpine` ...) is only a tag a test adds for its run (`useCatalogImages`)
 * and removes afterwards: left behind, it would shadow the real image on a developer's machine (compose would never
 * pull it); while another process (a parallel run) still uses it, it is kept for that one to remove. A catalog
 * reference present that is not a look-alike (the real image) is used as is and left alone.
 * Usage: bun scripts/test-template-images.ts [postgres|mariadb|...] [--force]  (builds the look-alikes, tags nothing)
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { END_OF_ARCHIVE, fileHeader, padding } from "../src/modules/backups/strategies/tar";
import { ensureDbImage } from "./test-db-images";
import { buildTestImages, imageId, TEST_IMAGES } from "./test-images";

/** The label every look-alike carries, and the one naming the reference it stands for. */
export const LOOKALIKE_LABEL = "sundeck.test-image";
export const STANDS_FOR_LABEL = "sundeck.test-image.stands-for";
const RECIPE_LABEL = "io.sundeck.test.recipe";

const CATALOG_DIR = join(import.meta.dir, "../src/modules/templates/catalog");

// The official mariadb image's healthcheck.sh, for the checks the catalog's templates run: --connect (a client
// connects on the socket) and --innodb_initialized (InnoDB answers), as root with the environment's password (the
// official script uses a healthcheck user it creates at initialisation).
const MARIADB_HEALTHCHECK = `#!/bin/sh
pw="\${MARIADB_ROOT_PASSWORD:-$MYSQL_ROOT_PASSWORD}"
q() { MYSQL_PWD="$pw" mariadb -uroot -N --socket=/run/mysqld/mysqld.sock -e "$1"; }
for arg; do
  case "$arg" in
    --connect) q "select 1" >/dev/null || exit 1 ;;
    --innodb_initialized)
      [ "$(q "select 1 from information_schema.ENGINES where engine='innodb' and support in ('YES','DEFAULT','ENABLED')")" = 1 ] || exit 1 ;;
    *) echo "healthcheck.sh: $arg is not known to this test image" >&2; exit 1 ;;
  esac
done
`;

// nginx:*-alpine for a static site: the image's entrypoint runs its command, and `nginx` (what the command names, as
// in the official image) is busybox httpd serving /usr/share/nginx/html on port 80 (a directory without an index.html
// answers an error, as nginx's 403 does); it stops on QUIT.
const NGINX_ENTRY = `#!/bin/sh
exec "$@"
`;
const NGINX = `#!/bin/sh
httpd -f -p 80 -h /usr/share/nginx/html &
pid=$!
trap 'kill $pid 2>/dev/null; exit 0' TERM INT QUIT
wait $pid
`;

interface LookAlike {
  /** The template's service whose image this stands for. */
  service: string;
  /** The local image it is built from (built when missing). */
  base: () => Promise<string>;
  /** Dockerfile lines after FROM. */
  lines: string[];
  /** Files of the build context: name -> content (text) or a host file to copy ({ host }). */
  files?: Record<string, string | { host: string }>;
}

const busybox = async () => {
  await buildTestImages({ quiet: true });
  return TEST_IMAGES.busybox;
};

const LOOKALIKES = {
  // the db image takes POSTGRES_USER / _DB / _PASSWORD, has pg_isready on PATH and keeps PGDATA where the template mounts
  postgres: { service: "db", base: () => ensureDbImage("postgres"), lines: [] },
  mariadb: {
    service: "db",
    base: () => ensureDbImage("mariadb"),
    lines: ["COPY healthcheck.sh /usr/local/bin/healthcheck.sh"],
    files: { "healthcheck.sh": MARIADB_HEALTHCHECK },
  },
  // MariaDB standing for MySQL 8: the same MYSQL_* environment, and the mysqladmin the healthcheck runs
  mysql: {
    service: "db",
    base: () => ensureDbImage("mariadb"),
    lines: ["COPY mysqladmin /usr/bin/mysqladmin"],
    files: { mysqladmin: { host: "/usr/bin/mariadb-admin" } },
  },
  // the template gives the command (redis-server --requirepass ... --appendonly yes); /data is the working directory
  redis: { service: "cache", base: () => ensureDbImage("redis"), lines: [] },
  // the Redis binaries under Valkey's names (the server takes its role from argv[0]: any name but redis-check-*)
  valkey: {
    service: "cache",
    base: () => ensureDbImage("redis"),
    lines: ["RUN ln -s redis-server /usr/bin/valkey-server && ln -s redis-cli /usr/bin/valkey-cli"],
  },
  "static-site": {
    service: "web",
    base: busybox,
    lines: [
      "COPY docker-entrypoint.sh /docker-entrypoint.sh",
      "COPY nginx /usr/sbin/nginx",
      "RUN mkdir -p /usr/share/nginx/html && echo 'Welcome to nginx (a Sundeck test image)' > /usr/share/nginx/html/index.html",
      "EXPOSE 80",
      "STOPSIGNAL SIGQUIT",
      'ENTRYPOINT ["/docker-entrypoint.sh"]',
      'CMD ["nginx", "-g", "daemon off;"]',
    ],
    files: { "docker-entrypoint.sh": NGINX_ENTRY, nginx: NGINX },
  },
} satisfies Record<string, LookAlike>;

export type LookAlikeTemplate = keyof typeof LOOKALIKES;
export const LOOKALIKE_TEMPLATES = Object.keys(LOOKALIKES) as LookAlikeTemplate[];

/** The image reference template `id`'s compose file names for the look-alike's service, read from the catalog YAML. */
export function catalogImage(id: LookAlikeTemplate): string {
  const file = parse(readFileSync(join(CATALOG_DIR, `${id}.yml`), "utf8")) as { compose?: string };
  const image = (parse(file?.compose ?? "") as any)?.services?.[LOOKALIKES[id].service]?.image;
  if (typeof image !== "string") throw new Error(`template ${id} has no image for service ${LOOKALIKES[id].service}`);
  return image;
}

/** Where the look-alike of template `id` is kept. */
export const lookalikeRef = (id: LookAlikeTemplate) => `sundeck-test/lookalike-${id}:latest`;

const building = new Map<LookAlikeTemplate, Promise<string>>();

/** Build the look-alike of `id` unless it is present and current (or `force`); resolves to its reference. */
export function ensureLookalike(id: LookAlikeTemplate, opts: { force?: boolean } = {}): Promise<string> {
  let p = building.get(id);
  if (!p || opts.force) {
    p = build(id, Boolean(opts.force));
    building.set(id, p);
    p.catch(() => building.delete(id));
  }
  return p;
}

async function build(id: LookAlikeTemplate, force: boolean): Promise<string> {
  const spec: LookAlike = LOOKALIKES[id];
  const ref = lookalikeRef(id);
  const base = await spec.base();
  const standsFor = catalogImage(id);
  const files: Record<string, Uint8Array> = {};
  for (const [name, f] of Object.entries(spec.files ?? {})) {
    files[name] = typeof f === "string" ? new TextEncoder().encode(f) : readFileSync(f.host);
  }
  const hash = new Bun.CryptoHasher("sha256").update(`${await imageId(base)}\n${standsFor}\n${spec.lines.join("\n")}`);
  for (const [name, bytes] of Object.entries(files)) hash.update(name).update(bytes);
  const recipe = hash.digest("hex").slice(0, 16);
  const previous = await imageId(ref);
  if (previous && !force && (await labelOf(ref, RECIPE_LABEL)) === recipe) return ref;
  const dockerfile = [
    `FROM ${base}`,
    ...spec.lines,
    `LABEL ${LOOKALIKE_LABEL}=1 ${STANDS_FOR_LABEL}="${standsFor}" ${RECIPE_LABEL}=${recipe}`,
    `LABEL org.opencontainers.image.description="a Sundeck test image standing for ${standsFor}: not the official image"`,
  ].join("\n");
  const context = tarOf({ Dockerfile: new TextEncoder().encode(`${dockerfile}\n`), ...files });
  // FROM a local image: nothing is pulled (--pull=false), so no registry is asked
  const p = Bun.spawn(["docker", "build", "-q", "--pull=false", "-t", ref, "-"], {
    stdin: context,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  if (code !== 0) throw new Error(`docker build of ${ref} (standing for ${standsFor}) failed: ${(err || out).trim()}`);
  if (previous && previous !== (await imageId(ref))) Bun.spawnSync(["docker", "image", "rm", previous]);
  return ref;
}

async function labelOf(ref: string, label: string): Promise<string> {
  const r = await run(["docker", "image", "inspect", "--format", `{{index .Config.Labels "${label}"}}`, ref]);
  return r.code === 0 ? r.out.trim() : "";
}

/** Where each process using a catalog tag says so (a file named by its pid), so a parallel run keeps the tag. */
const HOLDERS = join(tmpdir(), "sundeck-test-catalog-tags");

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** Say this process uses `ref`; the release says whether another live process still does. */
function hold(ref: string): () => boolean {
  const dir = join(HOLDERS, ref.replace(/[^A-Za-z0-9._-]/g, "_"));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, String(process.pid)), "");
  return () => {
    rmSync(join(dir, String(process.pid)), { force: true });
    return readdirSync(dir).some((f) => Number(f) !== process.pid && alive(Number(f)));
  };
}

/**
 * Make the catalog references of `ids` name their look-alikes for a test run; `release` removes the tags it added
 * (the look-alikes stay) unless another process still uses them. A reference that names an image that is not a
 * look-alike (the real one pulled earlier) is used as is and kept; one that names a look-alike (a run that was
 * killed) is tagged anew and removed at release.
 */
export async function useCatalogImages(ids: readonly LookAlikeTemplate[]): Promise<{ release(): Promise<void> }> {
  const tagged: Array<{ ref: string; unhold: () => boolean }> = [];
  const release = async () => {
    for (const { ref, unhold } of tagged.splice(0)) {
      if (unhold()) continue;
      // only while it is still ours: a real image pulled meanwhile is left alone
      if ((await labelOf(ref, LOOKALIKE_LABEL)) === "1") await run(["docker", "image", "rm", "--no-prune", ref]);
    }
  };
  try {
    const refs = await Promise.all(ids.map(async (id) => ({ image: await ensureLookalike(id), ref: catalogImage(id) })));
    for (const { image, ref } of refs) {
      if ((await imageId(ref)) !== null && (await labelOf(ref, LOOKALIKE_LABEL)) !== "1") continue;
      const unhold = hold(ref);
      tagged.push({ ref, unhold });
      const r = await run(["docker", "tag", image, ref]);
      if (r.code !== 0) throw new Error(`docker tag ${image} ${ref} failed: ${r.out.trim()}`);
    }
  } catch (e) {
    await release();
    throw e;
  }
  return { release };
}

/** A tar of flat files (mode 0755: COPY keeps it, and the scripts must run): the build context. */
function tarOf(files: Record<string, Uint8Array>): Uint8Array {
  const parts = Object.entries(files).flatMap(([name, data]) => [
    fileHeader(name, data.length, { mode: 0o755 }),
    data,
    new Uint8Array(padding(data.length)),
  ]);
  return Buffer.concat([...parts, END_OF_ARCHIVE]);
}

async function run(argv: string[]): Promise<{ code: number; out: string }> {
  const p = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe" });
  const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code, out: out + err };
}

if (import.meta.main) {
  const ids = process.argv.slice(2).filter((a) => !a.startsWith("--")) as LookAlikeTemplate[];
  for (const id of ids.length ? ids : LOOKALIKE_TEMPLATES) {
    const t = performance.now();
    try {
      if (!(id in LOOKALIKES)) throw new Error(`no look-alike for template ${id} (${LOOKALIKE_TEMPLATES.join(", ")})`);
      const ref = await ensureLookalike(id, { force: process.argv.includes("--force") });
      console.log(`${ref} (standing for ${catalogImage(id)}): ready in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    } catch (e) {
      console.error(`test-template-images: ${(e as Error).message}`);
      process.exit(1);
    }
  }
}
