/**
 * Resident memory of the compiled server, idle and with N apps deployed (default 20), split into anonymous memory
 * (heap, stacks: what Sundeck itself holds) and file-backed pages (the executable's code, clean and reclaimable),
 * next to a minimal compiled Bun.serve as the runtime's own baseline.
 *
 *   bun run build && bun scripts/bench/memory.ts [--apps 20]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { removeProject } from "./docker-cleanup";

const { values } = parseArgs({ options: { apps: { type: "string", default: "20" } } });
const APPS = Number(values.apps);
const BINARY = resolve(import.meta.dir, "../../dist/sundeck");
const dir = mkdtempSync(join(tmpdir(), "sundeck-membench-"));

interface Mem {
  rss: number;
  anon: number;
  file: number;
}

/** RSS and its anonymous / file-backed parts, in MiB, from /proc/<pid>/smaps_rollup. */
function memOf(pid: number): Mem {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0);
  const rss = kb("Rss");
  const anon = kb("Anonymous");
  return { rss: rss / 1024, anon: anon / 1024, file: (rss - anon) / 1024 };
}

/** Sample a few times a second for `ms`, return the maximum of each part. */
async function sample(pid: number, ms: number): Promise<Mem> {
  const max: Mem = { rss: 0, anon: 0, file: 0 };
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const m = memOf(pid);
    max.rss = Math.max(max.rss, m.rss);
    max.anon = Math.max(max.anon, m.anon);
    max.file = Math.max(max.file, m.file);
    await Bun.sleep(250);
  }
  return max;
}

async function waitFor<T>(fn: () => Promise<T | null | undefined | false>, what: string, ms = 120_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(200);
  }
}

async function baseline(): Promise<Mem> {
  const src = join(dir, "baseline.ts");
  writeFileSync(src, 'Bun.serve({ port: 0, fetch: () => new Response("ok") });\nsetInterval(() => {}, 1000);\n');
  const out = join(dir, "baseline");
  const b = Bun.spawnSync(["bun", "build", "--compile", "--minify", src, "--outfile", out]);
  if (b.exitCode !== 0) throw new Error("building the baseline failed");
  const p = Bun.spawn([out], { stdout: "ignore", stderr: "ignore" });
  await Bun.sleep(1500);
  const m = await sample(p.pid, 2000);
  p.kill();
  return m;
}

async function main() {
  const config = join(dir, "config.yaml");
  const init = Bun.spawnSync([
    BINARY,
    "init",
    "--config",
    config,
    "--data-dir",
    join(dir, "data"),
    "--apps-dir",
    join(dir, "apps"),
  ]);
  if (init.exitCode !== 0) throw new Error(`init failed: ${init.stderr}`);
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/root",
    SUNDECK_MANAGEMENT_PORT: "0",
    SUNDECK_TLS_MODE: "off",
    SUNDECK_LISTEN_ADDR: "127.0.0.1:0",
    SUNDECK_RATELIMIT_REQUESTS: "1000000",
    SUNDECK_RATELIMIT_BURST: "1000000",
    ...(process.env.BUN_OPTIONS ? { BUN_OPTIONS: process.env.BUN_OPTIONS } : {}),
  };
  Bun.spawnSync([
    BINARY,
    "users",
    "create",
    "--config",
    config,
    "--username",
    "bench",
    "--password",
    "bench-password",
    "--role",
    "admin",
  ]);
  const key = Bun.spawnSync([BINARY, "apikey", "create", "--config", config, "--username", "bench", "--name", "bench"])
    .stdout.toString()
    .trim();
  const server = Bun.spawn([BINARY, "serve", "--config", config], { env, stdout: "pipe", stderr: "inherit" });
  let out = "";
  void (async () => {
    for await (const c of server.stdout) out += new TextDecoder().decode(c);
  })();
  const slugs = Array.from({ length: APPS }, (_, i) => `mem-${i + 1}`);
  try {
    const url = await waitFor(async () => /dashboard on (http:\/\/\S+)/.exec(out)?.[1], "the server");
    const api = (path: string, init: RequestInit = {}) =>
      fetch(url + path, {
        ...init,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...init.headers },
      });
    await Bun.sleep(2000);
    const idle = await sample(server.pid, 3000);

    for (const slug of slugs) {
      const compose = `services:\n  web:\n    image: sundeck-test/web:latest\n    stop_grace_period: 1s\n    labels:\n      sundeck.domain: ${slug}.bench.test\n      sundeck.port: "8080"\n`;
      const r = await api("/api/apps/deploy", { method: "POST", body: JSON.stringify({ slug, compose }) });
      if (r.status !== 202) throw new Error(`deploy of ${slug}: ${r.status} ${await r.text()}`);
      await waitFor(
        async () => (await (await api(`/api/apps/${slug}`)).json())?.last_deploy?.status === "succeeded",
        `${slug} to deploy`,
      );
    }
    // some traffic on the API, as a dashboard would make
    for (let i = 0; i < 200; i++) await api("/api/apps");
    await Bun.sleep(3000);
    const loaded = await sample(server.pid, 5000);
    const base = await baseline();

    const row = (name: string, m: Mem) =>
      `${name.padEnd(34)} ${m.rss.toFixed(1).padStart(7)} ${m.anon.toFixed(1).padStart(10)} ${m.file.toFixed(1).padStart(12)}`;
    console.log(`\nResident memory, MiB (max over the sampling window); ${APPS} apps of sundeck-test/web\n`);
    console.log(`${"process".padEnd(34)} ${"RSS".padStart(7)} ${"anonymous".padStart(10)} ${"file-backed".padStart(12)}`);
    console.log(row("compiled Bun.serve (runtime floor)", base));
    console.log(row("sundeck serve, no apps", idle));
    console.log(row(`sundeck serve, ${APPS} apps`, loaded));
    console.log(
      `\nper app: ${((loaded.anon - idle.anon) / APPS).toFixed(2)} MiB anonymous; sundeck's heap above the runtime floor: ${(loaded.anon - base.anon).toFixed(1)} MiB`,
    );
    console.log(`target (< 50 MiB RSS with ${APPS} apps): ${loaded.rss < 50 ? "PASS" : "FAIL"} (${loaded.rss.toFixed(1)} MiB)`);
  } finally {
    // stop the server first: its reconciler would otherwise bring the removed containers back
    server.kill("SIGTERM");
    await server.exited;
    // containers, networks and volumes by compose label (a compose `down` would need each app's file)
    for (const slug of slugs) {
      removeProject(`sundeck-${slug}`);
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
