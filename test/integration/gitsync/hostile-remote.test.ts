/**
 * Git sync against a hostile remote (someone who can push to the sync repository, nothing more), on the compiled
 * server and a real smart-HTTP git server: tree entries named `..`, `.GIT`, `.Git` or holding a slash, a sparse
 * 200 MiB compose file, and a tree bomb (ten trees of ten, ten deep: 10^10 paths). Made with git plumbing, written
 * straight into the served repository (no fsck on the way in). Each cycle must end, in time, with the server's
 * resident memory within 64 MiB of where it started; what was left out is on the status and in the process log; and
 * sync goes on: a benign part of the same commit lands, local changes are pushed, the bad entries stay out of them.
 */
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from "bun:test";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { initConfig, type RunningBinary, SERVE_ENV, startBinary } from "../../helpers/binary";
import { peakRss, rssMiB } from "../../helpers/child-rss";
import { type GitServer, hostileWriter, remoteFile, startGitServer } from "../../helpers/git-server";
import { GIT_TOKEN } from "../../helpers/gitsync";
import { until } from "../../helpers/http";
import { tempDir } from "../../helpers/tmp";

setDefaultTimeout(120_000);

let gs: GitServer;
let server: RunningBinary;
let bare: string;
let apps: string;
let key: string;

let w: ReturnType<typeof hostileWriter>;
const gitOut = (args: string[]) =>
  execFileSync("git", ["--git-dir", bare, ...args])
    .toString()
    .trim();

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${server.url}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } });
const status = async () => (await (await api("/api/git/status")).json()) as any;

/** A change made here (an alert rule) that must reach the remote's `_global.yml`. */
async function ruleReachesRemote(name: string) {
  const rule = { name, app_slug: null, kind: "disk", threshold: 10, duration: "5m", webhook_ids: [], enabled: true };
  expect((await api("/api/alerts/rules", { method: "POST", body: JSON.stringify(rule) })).status).toBe(201);
  await until(async () => remoteFile(bare, "_global.yml").includes(name), { timeout: 30_000, what: `${name} pushed` });
}

/**
 * Ask for a sync and wait until that cycle has ended; the status then, and the server's peak RSS above its RSS
 * before the request.
 */
async function syncOnce(): Promise<{ st: any; grewMiB: number; tookMs: number }> {
  const before = (await status()).last_attempt_at;
  const start = rssMiB(server.proc.pid);
  const peak = peakRss(server.proc.pid, start);
  const t0 = Date.now();
  try {
    expect((await api("/api/git/sync-now", { method: "POST" })).status).toBe(202);
    const st = await until(
      async () => {
        const s = await status();
        return s.last_attempt_at !== before && !s.running ? s : null;
      },
      { timeout: 60_000, what: "the sync cycle to end" },
    );
    const r = { st, grewMiB: peak.peakMiB - start, tookMs: Date.now() - t0 };
    if (process.env.HOSTILE_DEBUG)
      console.log(`cycle: rss ${start.toFixed(1)} MiB, peak +${r.grewMiB.toFixed(1)} MiB, ${r.tookMs} ms`);
    return r;
  } finally {
    peak.stop();
  }
}

beforeAll(async () => {
  gs = startGitServer({ token: GIT_TOKEN });
  const name = `hostile-${process.pid}`;
  bare = gs.createBare(name);
  w = hostileWriter(bare);
  const dir = tempDir("sundeck-hostile-");
  const made = await initConfig(dir);
  key = made.key;
  apps = join(dir, "apps");
  const text = readFileSync(made.config, "utf8").replace(
    /^git_sync:\n(?: {2}.*\n)*/m,
    [
      "git_sync:",
      "  enabled: true",
      `  remote: ${gs.url(name)}`,
      `  https_token: ${GIT_TOKEN}`,
      "  poll_enabled: false",
      "  cycle_timeout: 30s",
      "",
    ].join("\n"),
  );
  writeFileSync(made.config, text);
  server = await startBinary(["--config", made.config], { env: { ...SERVE_ENV } });
  // the first push, and the cycle the worker runs right after it, both over
  await until(
    async () => {
      const s = await status();
      return s.last_commit_sha && !s.running && s.last_attempt_at;
    },
    { timeout: 30_000, what: "the first push" },
  );
});
afterAll(async () => {
  if (process.env.HOSTILE_DEBUG) console.log(server?.output());
  await server?.stop();
  await gs?.stop();
});

describe("a hostile remote", () => {
  it("skips entries named .., .GIT, .Git or with a slash, applies the rest of the commit, and keeps syncing", async () => {
    const blob = w.blob("pwned\n");
    w.commitWith(
      [
        { mode: "40000", name: "..", oid: w.dirWith("escape.yml", "x: 1\n") },
        { mode: "40000", name: ".GIT", oid: w.dirWith("config", "[core]\n\thooksPath = /tmp\n") },
        { mode: "40000", name: ".Git", oid: w.dirWith("HEAD", "ref: refs/heads/x\n") },
        { mode: "100644", name: "demo/../../x", oid: blob },
        // the benign part of the same commit: a new app's .env (no compose file, so nothing deploys)
        { mode: "40000", name: "demo", oid: w.dirWith(".env", "GREETING=from-the-remote\n") },
      ],
      "hostile names",
    );
    const { st, grewMiB } = await syncOnce();
    expect(st.last_error).toBeNull();
    expect(st.state).toBe("in_sync");
    const paths = st.skipped.map((s: any) => s.path);
    expect(paths).toEqual(expect.arrayContaining(["..", ".GIT", ".Git", "demo/../../x"]));
    expect(st.skipped.find((s: any) => s.path === "..").reason).toBe("skipped: an unsafe name");
    expect(readFileSync(join(apps, "demo", ".env"), "utf8")).toBe("GREETING=from-the-remote\n");
    expect(existsSync(join(apps, "..", "escape.yml"))).toBe(false);
    expect(grewMiB).toBeLessThan(64);
    expect(server.output()).toContain("git sync skipped what the remote sent");
  });

  it("pushes the next local change, without the remote's bad entries", async () => {
    await ruleReachesRemote("after-attack");
    const names = w.rootEntries().map((e) => e.name);
    expect(names).not.toContain("..");
    expect(names).not.toContain(".GIT");
    expect(names).toContain("demo");
  });

  it("skips a 200 MiB compose file by its header size, memory within 64 MiB", async () => {
    const sparse = join(tempDir(), "big.yml");
    execFileSync("truncate", ["-s", "200M", sparse]);
    const big = w.blobOfFile(sparse);
    w.commitWith(
      [{ mode: "40000", name: "huge", oid: w.tree([{ mode: "100644", name: "docker-compose.yml", oid: big }]) }],
      "a 200 MiB compose file",
      ["huge"],
    );
    const { st, grewMiB } = await syncOnce();
    expect(st.last_error).toBeNull();
    expect(grewMiB).toBeLessThan(64);
    expect(st.skipped).toEqual(
      expect.arrayContaining([
        { path: `object ${big.slice(0, 12)}`, reason: "blob not fetched: 200 MiB, over the 1 MiB limit" },
        {
          path: "huge/docker-compose.yml",
          reason: "not fetched (200 MiB, over the 1 MiB limit): local content kept",
        },
      ]),
    );
    expect(existsSync(join(apps, "huge", "docker-compose.yml"))).toBe(false);
  });

  it("ends a tree bomb's cycle in time, memory within 64 MiB, and goes on syncing", async () => {
    // ten levels of a tree holding ten copies of the level below: 10^10 paths from eleven objects
    let level = w.dirWith("f", "x\n");
    for (let depth = 0; depth < 10; depth++)
      level = w.tree(Array.from({ length: 10 }, (_, i) => ({ mode: "40000", name: `d${i}`, oid: level })));
    const bomb = w.commitWith([{ mode: "40000", name: "bomb", oid: level }], "a tree bomb");
    const { st, grewMiB, tookMs } = await syncOnce();
    expect(st.last_error).toBeNull();
    expect(tookMs).toBeLessThan(30_000);
    expect(grewMiB).toBeLessThan(64);
    expect(st.skipped).toContainEqual({
      path: `commit ${bomb.slice(0, 12)}`,
      reason: "not applied: the commit names more than 100000 paths (git_sync.max_paths): a tree bomb, or far too big",
    });
    // and the next local change still goes out
    await ruleReachesRemote("after-bomb");
    expect((await status()).state).toBe("in_sync");
  });

  it("reads past a flood of 200,000 branches to the one it syncs, memory within 64 MiB", async () => {
    const tip = gitOut(["rev-parse", "main"]);
    // sorted before refs/heads/main, as an attacker would name them
    const lines = Array.from({ length: 200_000 }, (_, i) => `${tip} refs/heads/aaa-${String(i).padStart(6, "0")}`);
    writeFileSync(join(bare, "packed-refs"), `# pack-refs with: peeled fully-peeled sorted\n${lines.join("\n")}\n`);
    w.commitWith([{ mode: "40000", name: "demo", oid: w.dirWith(".env", "GREETING=after-the-flood\n") }], "benign", ["demo"]);
    const { st, grewMiB } = await syncOnce();
    expect(st.last_error).toBeNull();
    expect(grewMiB).toBeLessThan(64);
    expect(readFileSync(join(apps, "demo", ".env"), "utf8")).toBe("GREETING=after-the-flood\n");
  });
});
