/**
 * The proxy engine against an earlier version of itself, side by side: a git ref checked out in a temporary worktree
 * and the working tree each run `proxy-sundeck.ts` (plain HTTP, as the benchmark builds it) in front of one shared
 * upstream, and `wrk` alternates between them, so machine noise hits both alike. Answers "did this change make the
 * engine slower?", which a run against Caddy on another day cannot.
 *
 *   bun scripts/bench/proxy-ab.ts --base c885d32 [--rounds 6] [--duration 10] [--bodies small,large]
 *
 * Prints req/s per round and the median ratio current/base per body. Exit status 1 when a ratio is below
 * `--min` (default 0.95).
 */
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const ROOT = resolve(import.meta.dir, "../..");
const HOST = "app.bench.test";

interface Proc {
  proc: ReturnType<typeof Bun.spawn>;
  port: number;
}

/** Start a benchmark process (stdin held open: its end stops it) and wait for its `READY {"port":N}`. */
async function start(cmd: string[], cwd: string): Promise<Proc> {
  const proc = Bun.spawn(cmd, { cwd, stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const reader = proc.stdout.getReader();
  const dec = new TextDecoder();
  let text = "";
  while (!text.includes("\n", text.indexOf("READY"))) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${cmd.join(" ")} exited before it was ready`);
    text += dec.decode(value);
  }
  const line = text.slice(text.indexOf("READY") + 6).split("\n")[0];
  return { proc, port: JSON.parse(line).port };
}

/** req/s of one wrk run at the max load of proxy.ts (2 threads, 50 connections). */
function wrk(port: number, path: string, seconds: number): number {
  const r = Bun.spawnSync(["wrk", "-t2", "-c50", `-d${seconds}s`, "-H", `Host: ${HOST}`, `http://127.0.0.1:${port}${path}`]);
  const m = /Requests\/sec:\s+([\d.]+)/.exec(r.stdout.toString());
  if (m === null) throw new Error(`wrk failed: ${r.stdout.toString()}${r.stderr.toString()}`);
  return Number(m[1]);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<number> {
  const { values: v } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      base: { type: "string" },
      rounds: { type: "string", default: "6" },
      duration: { type: "string", default: "10" },
      bodies: { type: "string", default: "small,large" },
      min: { type: "string", default: "0.95" },
    },
  });
  if (!v.base) throw new Error("--base <git ref> is required");
  const rounds = Number(v.rounds);
  const seconds = Number(v.duration);
  const tmp = mkdtempSync(join(tmpdir(), "sundeck-proxy-ab-"));
  const tree = join(tmp, "base");
  const git = (...args: string[]) => {
    const r = Bun.spawnSync(["git", ...args], { cwd: ROOT });
    if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString().trim()}`);
  };
  git("worktree", "add", "--detach", tree, v.base);
  symlinkSync(join(ROOT, "node_modules"), join(tree, "node_modules"));
  const procs: Proc[] = [];
  try {
    const up = await start(["bun", "scripts/bench/proxy-upstream.ts"], ROOT);
    procs.push(up);
    const proxy = async (cwd: string, dir: string) => {
      const p = await start(
        ["bun", "scripts/bench/proxy-sundeck.ts", "--upstream", `127.0.0.1:${up.port}`, "--dir", join(tmp, dir)],
        cwd,
      );
      procs.push(p);
      return p.port;
    };
    const ports = { base: await proxy(tree, "base-data"), current: await proxy(ROOT, "current-data") };
    console.log(`base ${v.base} (worktree) vs current (working tree); wrk -t2 -c50, ${rounds} rounds of ${seconds} s`);
    let failed = false;
    for (const body of v.bodies!.split(",")) {
      const path = body === "large" ? "/large" : "/small";
      for (const port of Object.values(ports)) wrk(port, path, 2);
      const got: Record<string, number[]> = { base: [], current: [] };
      for (let i = 0; i < rounds; i++) {
        const order = i % 2 === 0 ? (["base", "current"] as const) : (["current", "base"] as const);
        for (const k of order) got[k].push(wrk(ports[k], path, seconds));
        console.log(
          `  ${body} round ${i + 1}: base ${got.base.at(-1)!.toFixed(0)}/s, current ${got.current.at(-1)!.toFixed(0)}/s`,
        );
      }
      const ratio = median(got.current) / median(got.base);
      failed ||= ratio < Number(v.min);
      console.log(
        `${body}: median base ${median(got.base).toFixed(0)} req/s, current ${median(got.current).toFixed(0)} req/s, ` +
          `current/base ${ratio.toFixed(3)}`,
      );
    }
    return failed ? 1 : 0;
  } finally {
    for (const p of procs) p.proc.kill();
    git("worktree", "remove", "--force", tree);
    rmSync(tmp, { recursive: true, force: true });
  }
}

process.exit(await main());
