/**
 * What reading the template catalog and the service snippets costs the compiled server in resident memory (issue 27:
 * "Resident memory with 20 apps grows by less than 1 MiB; the catalog is read on first use"). With N apps deployed
 * (default 20) it measures the settled RSS, then calls GET /api/templates, GET /api/snippets and every template's and
 * snippet's detail, measures again, and prints the difference (RSS, its anonymous and file-backed parts, the JS heap
 * after a full GC); a second round of the same calls shows whether repeated reads grow it further. Exits 1 when the
 * first read grows RSS by 1 MiB or more.
 *
 *   bun run build && bun scripts/bench/templates-memory.ts [--apps 20] [--binary dist/sundeck] [--target-mib 1]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { removeProject } from "./docker-cleanup";
import { rollupMiB } from "./memory-smaps";

const { values } = parseArgs({
  options: {
    apps: { type: "string", default: "20" },
    binary: { type: "string" },
    "target-mib": { type: "string", default: "1" },
  },
});
const APPS = Number(values.apps);
const TARGET_MIB = Number(values["target-mib"]);
const BINARY = resolve(values.binary ?? resolve(import.meta.dir, "../../dist/sundeck"));
const dir = mkdtempSync(join(tmpdir(), "sundeck-tplmem-"));

interface Mem {
  rss: number;
  anon: number;
  /** The JS heap after the full collection the snapshot runs, MiB. */
  heap: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function until<T>(fn: () => Promise<T | null | undefined | false>, what: string, ms = 120_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(200);
  }
}

function cli(args: string[]): string {
  const r = Bun.spawnSync([BINARY, ...args]);
  if (r.exitCode !== 0) throw new Error(`sundeck ${args[0]} failed: ${r.stderr}`);
  return r.stdout.toString().trim();
}

async function main() {
  const config = join(dir, "config.yaml");
  cli(["init", "--config", config, "--data-dir", join(dir, "data"), "--apps-dir", join(dir, "apps")]);
  cli(["users", "create", "--config", config, "--username", "bench", "--password", "bench-password", "--role", "admin"]);
  const key = cli(["apikey", "create", "--config", config, "--username", "bench", "--name", "bench"]);
  const server = Bun.spawn([BINARY, "serve", "--config", config], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/root",
      SUNDECK_MANAGEMENT_PORT: "0",
      SUNDECK_TLS_MODE: "off",
      SUNDECK_LISTEN_ADDR: "127.0.0.1:0",
      SUNDECK_RATELIMIT_REQUESTS: "1000000",
      SUNDECK_RATELIMIT_BURST: "1000000",
      SUNDECK_DEBUG_MEMORY: "1",
    },
    stdout: "pipe",
    stderr: "inherit",
  });
  let out = "";
  void (async () => {
    for await (const c of server.stdout) out += new TextDecoder().decode(c);
  })();
  const slugs = Array.from({ length: APPS }, (_, i) => `tplmem-${i + 1}`);
  try {
    const url = await until(async () => /dashboard on (http:\/\/\S+)/.exec(out)?.[1], "the server");
    const api = (path: string, init: RequestInit = {}) =>
      fetch(url + path, { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } });

    for (const slug of slugs) {
      const compose = `services:\n  web:\n    image: sundeck-test/web:latest\n    stop_grace_period: 1s\n    labels:\n      sundeck.domain: ${slug}.bench.test\n      sundeck.port: "8080"\n`;
      const r = await api("/api/apps/deploy", { method: "POST", body: JSON.stringify({ slug, compose }) });
      if (r.status !== 202) throw new Error(`deploy of ${slug}: ${r.status} ${await r.text()}`);
      await until(async () => (await (await api(`/api/apps/${slug}`)).json())?.last_deploy?.status === "succeeded", slug);
    }
    for (let i = 0; i < 200; i++) await api("/api/apps");

    /** Past the idle collection after the deploys, a full GC (SIGUSR2 snapshot), then the median of 5 s of samples. */
    const settled = async (): Promise<Mem> => {
      await Bun.sleep(8000);
      const before = out.length;
      server.kill("SIGUSR2");
      await until(async () => out.slice(before).includes("memory snapshot"), "the memory snapshot", 10_000);
      const line =
        out
          .slice(before)
          .split("\n")
          .find((l) => l.includes("memory snapshot memory=")) ?? "";
      const snap = JSON.parse(JSON.parse(/memory=(".*")$/.exec(line)?.[1] ?? '"{}"'));
      const samples: Array<{ rss: number; anon: number }> = [];
      for (let i = 0; i < 20; i++) {
        samples.push(rollupMiB(server.pid));
        await Bun.sleep(250);
      }
      return {
        rss: median(samples.map((s) => s.rss)),
        anon: median(samples.map((s) => s.anon)),
        heap: (snap.heap_size ?? 0) / 1024 / 1024,
      };
    };
    /** Every read the dashboard's gallery, wizard and snippet picker make; returns the bytes received. */
    const readAll = async (): Promise<number> => {
      let bytes = 0;
      const get = async (path: string) => {
        const r = await api(path);
        if (r.status !== 200) throw new Error(`GET ${path}: ${r.status}`);
        const text = await r.text();
        bytes += text.length;
        return JSON.parse(text);
      };
      const templates = await get("/api/templates");
      const snippets = await get("/api/snippets");
      for (const t of templates) await get(`/api/templates/${t.id}`);
      for (const s of snippets) await get(`/api/snippets/${s.id}?generate=true`);
      return bytes;
    };

    const before = await settled();
    const bytes = await readAll();
    const after = await settled();
    await readAll();
    const again = await settled();

    const row = (name: string, m: Mem) =>
      `${name.padEnd(40)} ${m.rss.toFixed(2).padStart(8)} ${m.anon.toFixed(2).padStart(10)} ${(m.rss - m.anon).toFixed(2).padStart(12)} ${m.heap.toFixed(2).padStart(8)}`;
    const delta = (a: Mem, b: Mem): Mem => ({ rss: b.rss - a.rss, anon: b.anon - a.anon, heap: b.heap - a.heap });
    console.log(`\nResident memory, MiB (settled: after a full GC, median of 5 s); ${APPS} apps of sundeck-test/web\n`);
    console.log(
      `${"".padEnd(40)} ${"RSS".padStart(8)} ${"anonymous".padStart(10)} ${"file-backed".padStart(12)} ${"JS heap".padStart(8)}`,
    );
    console.log(row("before any template or snippet read", before));
    console.log(row("after one read of everything", after));
    console.log(row("after a second read", again));
    console.log(row("growth from the first read", delta(before, after)));
    console.log(row("growth from the second read", delta(after, again)));
    console.log(`\n(one read: ${(bytes / 1024).toFixed(0)} KiB of JSON: both lists and every detail)`);
    const grew = after.rss - before.rss;
    const pass = grew < TARGET_MIB;
    console.log(`target (first read grows RSS by < ${TARGET_MIB} MiB): ${pass ? "PASS" : "FAIL"} (${grew.toFixed(2)} MiB)`);
    if (!pass) process.exitCode = 1;
  } finally {
    server.kill("SIGTERM");
    await server.exited;
    for (const slug of slugs) removeProject(`sundeck-${slug}`);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
