/**
 * Where the runtime's resident pages go (issue 16): small compiled probes that start from the bare Bun.serve floor and
 * add one runtime subsystem each, used the way Sundeck uses it (bun:sqlite with a WAL db, Bun.spawn, fetch over the
 * engine's unix socket, a WebSocket server with a client, fs.watch, gzip, crypto, argon2id, a TLS listener, a raw
 * Bun.listen proxy socket, the JIT warmed by a hot loop), then all of them together; and two probes that only import
 * a module graph without starting anything (the libraries: elysia + drizzle; Sundeck's route tree through createApp),
 * to split the anonymous heap into the libraries' code objects and Sundeck's running state.
 *
 * Each probe is compiled like the server (scripts/lib/compile.ts: minified ESM bytecode, the same JIT policy), run
 * for a few seconds of its workload, then made to run a full GC and print bun:jsc heapStats; its resident pages are
 * read from /proc/<pid>/smaps by mapping: the executable's code (r-x) and data (the embedded bytecode and modules),
 * other files (libc, ld.so), anonymous executable (JIT code) and other anonymous memory (JS heap, allocator arenas).
 *
 *   bun scripts/bench/memory-probes.ts [--only sqlite,spawn] [--runs 3] [--keep /tmp/probes] [--cumulative]
 *
 * `--cumulative` adds Sundeck's subsystems one at a time instead (each probe is the one before plus one, in the order
 * of CUMULATIVE below, gzip and TLS left out as the measured configuration does not run them), so the steps sum to
 * the last probe's RSS: shared pages are counted once, at the first subsystem that touches them.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { JIT_POLICY } from "../lib/compile";
import { smapsBy } from "./memory-smaps";

const { values } = parseArgs({
  options: {
    only: { type: "string" },
    runs: { type: "string", default: "3" },
    keep: { type: "string" },
    "work-s": { type: "string", default: "6" },
    cumulative: { type: "boolean", default: false },
  },
});
const RUNS = Number(values.runs);
/** Seconds each probe runs its workload before the GC and the reading. */
const WORK_S = Number(values["work-s"]);
const ROOT = resolve(import.meta.dir, "../..");
const dir = values.keep ? resolve(values.keep) : mkdtempSync(join(tmpdir(), "sundeck-probes-"));
mkdirSync(dir, { recursive: true });

/** Absolute path of a package as the repo resolves it (the probe sources live outside the repo). */
const pkg = (name: string) => Bun.resolveSync(name, ROOT);

/** The floor every probe starts from: the bare server of scripts/bench/memory.ts's baseline. */
const FLOOR = `
const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("ok") });
setInterval(() => {}, 1000);
`;

/** After the workload: a full GC, then heapStats on stdout (the harness reads smaps right after). */
const REPORT = `
import { heapStats as __hs } from "bun:jsc";
setTimeout(() => {
  Bun.gc(true);
  const h = __hs();
  const top = Object.entries(h.objectTypeCounts).sort((a, b) => b[1] - a[1]).slice(0, 8);
  console.log("PROBE " + JSON.stringify({ heapSize: h.heapSize, heapCapacity: h.heapCapacity, extraMemorySize: h.extraMemorySize, objectCount: h.objectCount, top }));
}, ${WORK_S * 1000});
`;

/** One subsystem each, the way Sundeck uses it. */
const PROBES: Record<string, string> = {
  floor: "",
  sqlite: `
import { Database } from "bun:sqlite";
const db = new Database(${JSON.stringify(join(dir, "probe.db"))}, { create: true });
db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON");
db.exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, app TEXT, at INTEGER, v REAL)");
db.exec("CREATE INDEX IF NOT EXISTS t_app_at ON t (app, at)");
const ins = db.prepare("INSERT INTO t (app, at, v) VALUES (?, ?, ?)");
const sel = db.prepare("SELECT app, count(*) n, avg(v) v FROM t WHERE at > ? GROUP BY app");
setInterval(() => {
  db.transaction(() => { for (let i = 0; i < 200; i++) ins.run("app-" + (i % 20), Date.now(), Math.random()); })();
  sel.all(Date.now() - 60000);
}, 250);
`,
  spawn: `
setInterval(async () => {
  const p = Bun.spawn(["/bin/sh", "-c", "echo compose"], { stdout: "pipe", stderr: "pipe" });
  await new Response(p.stdout).text();
  await p.exited;
}, 500);
`,
  "fetch-unix": `
const unix = "/var/run/docker.sock";
setInterval(async () => {
  const list = await (await fetch("http://localhost/v1.41/containers/json", { unix })).json();
  await (await fetch("http://localhost/v1.41/info", { unix })).json();
  if (list[0]) await (await fetch("http://localhost/v1.41/containers/" + list[0].Id + "/stats?stream=false", { unix })).json();
}, 500);
`,
  websocket: `
const ws = Bun.serve({
  hostname: "127.0.0.1", port: 0,
  fetch(req, s) { return s.upgrade(req) ? undefined : new Response("no", { status: 400 }); },
  websocket: { open(w) { w.subscribe("t"); }, message() {} },
});
const client = new WebSocket("ws://127.0.0.1:" + ws.port);
client.onmessage = () => {};
setInterval(() => ws.publish("t", JSON.stringify({ line: "x".repeat(200), at: Date.now() })), 100);
`,
  "fs-watch": `
import { watch, writeFileSync, mkdirSync } from "node:fs";
const d = ${JSON.stringify(join(dir, "watched"))};
mkdirSync(d + "/app", { recursive: true });
watch(d, { recursive: true }, () => {});
let i = 0;
setInterval(() => writeFileSync(d + "/app/compose.yaml", "n: " + i++), 500);
`,
  gzip: `
import { gzipSync, gunzipSync } from "node:zlib";
const data = new TextEncoder().encode("line of a log or a tar ".repeat(20000));
setInterval(async () => {
  gunzipSync(gzipSync(data));
  await new Response(new Blob([Bun.gzipSync(data)]).stream().pipeThrough(new DecompressionStream("gzip"))).arrayBuffer();
}, 500);
`,
  crypto: `
import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
const key = randomBytes(32);
setInterval(() => {
  const mac = createHmac("sha256", key).update("payload ".repeat(100)).digest();
  timingSafeEqual(mac, mac);
  const iv = randomBytes(12);
  const c = createCipheriv("aes-256-gcm", key, iv);
  const enc = Buffer.concat([c.update("secret env value"), c.final()]);
  const d = createDecipheriv("aes-256-gcm", key, iv);
  d.setAuthTag(c.getAuthTag());
  Buffer.concat([d.update(enc), d.final()]);
  new Bun.CryptoHasher("sha256").update("x").digest("hex");
}, 100);
`,
  argon2: `
// a login: argon2id at Sundeck's parameters (src/modules/auth/passwords.ts)
const h = await Bun.password.hash("bench-password", { algorithm: "argon2id", memoryCost: 19456, timeCost: 2 });
setInterval(() => Bun.password.verify("bench-password", h), 2000);
`,
  tls: `
import tls from "node:tls";
import { readFileSync } from "node:fs";
const key = readFileSync(${JSON.stringify(join(dir, "key.pem"))});
const cert = readFileSync(${JSON.stringify(join(dir, "cert.pem"))});
const srv = tls.createServer({ key, cert }, (s) => { s.on("data", (b) => s.write(b)); });
srv.listen(0, "127.0.0.1", () => {
  const port = srv.address().port;
  setInterval(() => {
    const c = tls.connect({ host: "127.0.0.1", port, rejectUnauthorized: false }, () => { c.write("ping"); });
    c.on("data", () => c.end());
    c.on("error", () => {});
  }, 500);
});
`,
  "raw-listen": `
// the proxy's plain listener: Bun.listen with raw HTTP/1.1, and connections to an upstream
const up = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data(s) { s.write("HTTP/1.1 200 OK\\r\\ncontent-length: 2\\r\\n\\r\\nok"); } } });
const l = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: {
  open(s) { s.data = Bun.connect({ hostname: "127.0.0.1", port: up.port, socket: { data(u, b) { s.write(b); } } }); },
  async data(s, b) { (await s.data).write(b); },
} });
setInterval(async () => {
  const c = await Bun.connect({ hostname: "127.0.0.1", port: l.port, socket: { data(c) { c.end(); } } });
  c.write("GET / HTTP/1.1\\r\\nhost: a\\r\\n\\r\\n");
}, 100);
`,
  jit: `
// hot code to the optimising tiers with little garbage: fixed-shape objects, property reads, arithmetic, a Map
const objs = Array.from({ length: 2000 }, (_, i) => ({ id: i, cpu: i * 1.5, mem: i * 2, name: "app-" + (i % 20) }));
const byName = new Map(objs.map((o) => [o.name, o]));
function score(o) { return o.cpu * 0.7 + o.mem * 0.3 + o.name.length + (byName.get(o.name)?.id ?? 0); }
function work() { let acc = 0; for (let r = 0; r < 300; r++) for (const o of objs) acc += score(o); return acc; }
setInterval(work, 300);
`,
  "node-builtins": `
// the node: modules Sundeck's serve path imports, each touched
import { EventEmitter } from "node:events";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createInterface } from "node:readline";
import { lookup } from "node:dns/promises";
import os from "node:os";
import path from "node:path";
import net from "node:net";
import { readFile } from "node:fs/promises";
new EventEmitter().emit("x");
setInterval(async () => {
  await pipeline(Readable.from(["a\\n", "b\\n"]), async function* (src) { for await (const _ of src) yield ""; });
  const rl = createInterface({ input: Readable.from(["l1\\nl2\\n"]) });
  for await (const _ of rl) {}
  os.loadavg(); path.join("a", "b"); net.isIP("127.0.0.1");
  await readFile("/proc/self/stat", "utf8");
  await lookup("localhost").catch(() => {});
}, 500);
`,
  libs: `
// the libraries only: elysia with a route and drizzle over bun:sqlite, imported and constructed, nothing started
import { Elysia, t } from ${JSON.stringify(pkg("elysia"))};
import { drizzle } from ${JSON.stringify(pkg("drizzle-orm/bun-sqlite"))};
import { sqliteTable, text, integer } from ${JSON.stringify(pkg("drizzle-orm/sqlite-core"))};
import { eq } from ${JSON.stringify(pkg("drizzle-orm"))};
globalThis.__keep = [new Elysia().get("/x", () => "x", { query: t.Object({ a: t.Optional(t.String()) }) }), drizzle, sqliteTable("t", { id: integer("id"), s: text("s") }), eq];
`,
  "app-graph": `
// Sundeck's route tree and its composition root, imported (every module's top level runs), nothing started
import { createApp } from ${JSON.stringify(join(ROOT, "src/app.ts"))};
import * as context from ${JSON.stringify(join(ROOT, "src/context.ts"))};
import * as serve from ${JSON.stringify(join(ROOT, "src/server.ts"))};
globalThis.__keep = [createApp, context, serve];
`,
};
/** What `sundeck serve` with 20 apps and the dashboard open runs, in the order a start reaches it. */
const CUMULATIVE = [
  "node-builtins",
  "sqlite",
  "libs",
  "app-graph",
  "raw-listen",
  "fetch-unix",
  "spawn",
  "websocket",
  "fs-watch",
  "crypto",
  "argon2",
  "jit",
];
/** Subsystems of a running server (the module-graph probes stay separate). */
const RUNTIME = Object.keys(PROBES).filter((k) => !["floor", "libs", "app-graph"].includes(k));

interface Reading {
  groups: Record<string, number>;
  rss: number;
  heap: { heapSize: number; heapCapacity: number; extraMemorySize: number; objectCount: number; top: [string, number][] };
}

/** Resident KiB of /proc/<pid>/smaps by mapping (as scripts/bench/memory.ts groups them). */
function smapsGroups(pid: number, binary: string): Record<string, number> {
  return smapsBy(pid, (perms, name) => {
    if (name === binary) return perms.includes("x") ? "code" : "data";
    if (name.startsWith("/")) return "files";
    if (name.startsWith("[")) return name === "[heap]" || name.startsWith("[stack") ? "anon" : "other";
    return perms.includes("x") ? "jit" : "anon";
  });
}

/** A probe's source: its imports at the top, its body in a block of its own (so "all" can join them). */
function wrap(body: string): string {
  const lines = body.split("\n");
  const imports = lines.filter((l) => l.startsWith("import "));
  return `${imports.join("\n")}\n{\n${lines.filter((l) => !l.startsWith("import ")).join("\n")}\n}`;
}

async function build(name: string, body: string): Promise<string> {
  const src = join(dir, `${name.replace("+", "plus-")}.ts`);
  writeFileSync(src, `${name === "all" || name.startsWith("+") ? body : wrap(body)}\n${FLOOR}\n${REPORT}`);
  const outfile = join(dir, name.replace("+", "plus-"));
  const r = await Bun.build({
    entrypoints: [src],
    minify: true,
    bytecode: true,
    format: "esm",
    sourcemap: "none",
    define: { "process.env.NODE_ENV": JSON.stringify("production") },
    compile: { outfile, autoloadDotenv: false, autoloadBunfig: false, jitPolicy: JIT_POLICY },
  });
  if (!r.success) throw new Error(`build of ${name} failed:\n${r.logs.map(String).join("\n")}`);
  return outfile;
}

async function runOnce(binary: string): Promise<Reading> {
  const p = Bun.spawn([binary], { stdout: "pipe", stderr: "pipe", cwd: dir });
  let out = "";
  const reading = (async () => {
    for await (const c of p.stdout) out += new TextDecoder().decode(c);
  })();
  const end = Date.now() + WORK_S * 1000 + 20_000;
  while (!out.includes("PROBE ")) {
    if (Date.now() > end || p.exitCode !== null) throw new Error(`${binary}: no report (${await new Response(p.stderr).text()})`);
    await Bun.sleep(100);
  }
  await Bun.sleep(300);
  const groups = smapsGroups(p.pid, binary);
  p.kill();
  await p.exited;
  await reading;
  const heap = JSON.parse(/PROBE (.*)/.exec(out)?.[1] ?? "null");
  const rss = Object.values(groups).reduce((a, b) => a + b, 0);
  return { groups, rss, heap };
}

/** The run with the median RSS. */
async function measure(binary: string): Promise<Reading> {
  const runs: Reading[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await runOnce(binary));
  runs.sort((a, b) => a.rss - b.rss);
  return runs[Math.floor(runs.length / 2)];
}

async function main() {
  Bun.spawnSync(
    ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"].concat([
      "-subj",
      "/CN=probe",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
    ]),
    { stdout: "ignore", stderr: "ignore" },
  );
  const sources: Record<string, string> = { ...PROBES, all: RUNTIME.map((k) => wrap(PROBES[k])).join("\n") };
  const steps = values.only ? values.only.split(",") : CUMULATIVE;
  if (values.cumulative)
    steps.forEach((k, i) => {
      sources[`+${k}`] = steps
        .slice(0, i + 1)
        .map((j) => wrap(PROBES[j]))
        .join("\n");
    });
  const wanted = values.cumulative
    ? ["floor", ...steps.map((k) => `+${k}`)]
    : values.only
      ? ["floor", ...steps]
      : [...Object.keys(PROBES), "all"];
  const results: Record<string, Reading> = {};
  for (const name of wanted) {
    const binary = await build(name, sources[name]);
    results[name] = await measure(binary);
    process.stderr.write(`${name} ${(results[name].rss / 1024).toFixed(1)} MiB\n`);
  }

  const floor = results.floor;
  const mib = (kb: number) => (kb / 1024).toFixed(1);
  const cols = ["code", "data", "files", "jit", "anon"];
  console.log(
    `\nResident MiB by mapping, median of ${RUNS} runs after ${WORK_S} s of work and a full GC; load ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}\n`,
  );
  console.log(
    `${"probe".padEnd(16)} ${"RSS".padStart(6)} ${(values.cumulative ? "+step" : "+floor").padStart(7)} | ${cols.map((c) => c.padStart(6)).join(" ")} | ${"JS heap".padStart(8)} objects`,
  );
  let prev = floor;
  for (const [name, r] of Object.entries(results)) {
    // against the floor, or with --cumulative against the row above
    const base = values.cumulative ? prev : floor;
    prev = r;
    const d = name === "floor" ? "" : `+${mib(r.rss - base.rss)}`;
    console.log(
      `${name.padEnd(16)} ${mib(r.rss).padStart(6)} ${d.padStart(7)} | ${cols
        .map((c) => {
          const v = (r.groups[c] ?? 0) - (name === "floor" ? 0 : (base.groups[c] ?? 0));
          return (name === "floor" ? mib(v) : `${v >= 0 ? "+" : ""}${mib(v)}`).padStart(6);
        })
        .join(" ")} | ${(r.heap.heapSize / 1048576).toFixed(1).padStart(8)} ${r.heap.objectCount}`,
    );
  }
  if (results.all) {
    const sum = RUNTIME.filter((k) => results[k]).reduce((a, k) => a + results[k].rss - floor.rss, 0);
    console.log(`\nsum of the single-subsystem deltas: +${mib(sum)} MiB; all together: +${mib(results.all.rss - floor.rss)} MiB`);
  }
  for (const name of ["libs", "app-graph", "+libs", "+app-graph", `+${steps.at(-1)}`].filter((n) => results[n]))
    console.log(`${name} top object types: ${results[name].heap.top.map(([k, v]) => `${k} ${v}`).join(", ")}`);
  if (!values.keep) rmSync(dir, { recursive: true, force: true });
}

await main();
