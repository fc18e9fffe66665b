/**
 * `sundeck git status|sync-now|apply-pending` against a real server whose git sync worker mirrors to a real smart-HTTP
 * remote (Debian git's http-backend behind test/helpers/git-server.ts), run from source in a child process as a user
 * would run it with the key in the environment: status while off (text and JSON), the first sync pushing the current
 * state into the empty remote, a commit made by another user of the remote counted in fetch-only mode (behind by 1,
 * text and JSON) and applied, a non-empty remote refused with the error in the status and exit 1, and usage mistakes.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { GitSyncStatus } from "../../../src/shared/git-sync";
import { runSundeck } from "../../helpers/cli";
import {
  type GitServer,
  git,
  otherClone,
  remoteFile,
  remoteLog,
  remotePaths,
  seedBare,
  startGitServer,
} from "../../helpers/git-server";
import { until } from "../../helpers/http";
import { startTestServer, type TestServer } from "../../helpers/server";
import { tempDir } from "../../helpers/tmp";

setDefaultTimeout(60_000);

let s: TestServer;
let remote: GitServer;
let key: string;
let home: string;
let bare: string;
/** The foreign remote behind a gate (kept open until the end, so a retry fails the same way). */
let held: ReturnType<typeof gatedRemote> | undefined;

const sundeck = (...args: string[]) => runSundeck(args, { url: s.url, key, home });

const status = async (): Promise<GitSyncStatus> => (await s.root.get("/api/git/status")).json;

async function configure(body: Record<string, unknown>) {
  const res = await s.root.put("/api/git/config", body);
  if (res.status !== 200) throw new Error(`git config not stored: ${res.status} ${res.text}`);
  return res.json;
}

/** sync-now ended in the refusal of a foreign remote: exit 1, the status's error on one line, nothing pushed. */
async function expectRefused(r: { code: number; stdout: string; stderr: string }, foreign: string) {
  expect(r.stdout).toBe("");
  expect(r.stderr).toStartWith("sundeck: sync failed: ");
  expect(r.code).toBe(1);
  const st = await status();
  expect(st.state).toBe("error");
  expect(r.stderr).toBe(`sundeck: sync failed: ${st.last_error}\n`);
  const text = await sundeck("git", "status");
  expect(text.code).toBe(0);
  expect(text.stdout).toContain("git sync: error\n");
  expect(text.stdout).toContain(`last error: ${st.last_error}\n`);
  // nothing was pushed over their history
  expect(remoteLog(foreign)).toEqual(["someone else's history"]);
}

/** A forwarder to `target` that holds every request until `open()`. */
function gatedRemote(target: string) {
  const base = new URL(target);
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  let waiting = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      waiting++;
      await gate;
      const u = new URL(req.url);
      const body = req.method === "POST" ? await req.arrayBuffer() : undefined;
      return fetch(`${base.origin}${u.pathname}${u.search}`, { method: req.method, headers: req.headers, body });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}${base.pathname}`,
    waiting: () => waiting,
    open: () => release(),
    stop: () => server.stop(true),
  };
}

beforeAll(async () => {
  home = tempDir();
  remote = startGitServer();
  bare = remote.createBare("apps");
  s = await startTestServer();
  key = s.keyFor("root").key;
});

afterAll(async () => {
  held?.stop();
  await s?.stop();
  await remote?.stop();
});

describe("sundeck git", () => {
  test("status while git sync is off: one line, exit 0; --output json is the API's object", async () => {
    const text = await sundeck("git", "status");
    expect(text.code).toBe(0);
    expect(text.stdout).toStartWith("git sync: disabled");
    expect(text.stdout.trim().split("\n")).toHaveLength(1);
    const json = await sundeck("git", "status", "--output", "json");
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ enabled: false, state: "disabled", behind_by: 0 });
  });

  test("sync-now while off is a one-line failure (exit 1)", async () => {
    const r = await sundeck("git", "sync-now");
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("sundeck: git sync is disabled on this server\n");
  });

  test("usage mistakes exit 2", async () => {
    expect((await sundeck("git", "status", "--output", "yaml")).code).toBe(2);
    const t = await sundeck("git", "sync-now", "--timeout", "0");
    expect(t.code).toBe(2);
    expect(t.stderr).toContain("--timeout must be a number of seconds");
  });

  test("the first sync-now pushes the current state into the empty remote; status shows the commit", async () => {
    await configure({ enabled: true, remote: remote.url("apps"), poll_enabled: false, auto_apply_enabled: false });
    // the worker starts on its own after the change: wait for it, then ask for a sync and follow it
    await until(async () => (await status()).state !== "disabled", { timeout: 20_000, what: "the worker to start" });
    const r = await sundeck("git", "sync-now");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const head = remoteLog(bare);
    expect(head.length).toBeGreaterThan(0);
    expect(remotePaths(bare)).toContain(".gitignore");
    const st = await status();
    expect(st.state).toBe("in_sync");
    expect(r.stdout).toBe(`sync done: in sync at ${st.last_commit_sha!.slice(0, 12)}\n`);

    const text = await sundeck("git", "status");
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("git sync: in sync\n");
    expect(text.stdout).toMatch(/^last sync: \d+s ago \(\d{4}-\d\d-\d\dT/m);
    expect(text.stdout).toContain(`last commit: ${st.last_commit_sha!.slice(0, 12)}\n`);
    expect(text.stdout).not.toContain("last error");
  });

  test("fetch-only: a remote commit is counted (behind by 1) by sync-now, then apply-pending applies it", async () => {
    const other = otherClone(bare);
    const global = remoteFile(bare, "_global.yml");
    const sha = await other.commitAndPush({ "_global.yml": `${global}# reviewed by a colleague\n` }, "a note from a colleague");
    const r = await sundeck("git", "sync-now");
    expect(r.code).toBe(0);
    expect(r.stdout).toStartWith("sync done: behind by 1 commit");

    const text = await sundeck("git", "status");
    expect(text.stdout).toContain("git sync: behind by 1 commit\n");
    expect(text.stdout).toContain("behind by: 1 (apply them with: sundeck git apply-pending)\n");
    const json = JSON.parse((await sundeck("git", "status", "--output", "json")).stdout) as GitSyncStatus;
    expect(json).toMatchObject({ enabled: true, state: "behind", behind_by: 1 });

    const a = await sundeck("git", "apply-pending");
    expect(a.stderr).toBe("");
    expect(a.code).toBe(0);
    expect(a.stdout).toStartWith("apply done: in sync");
    expect(await status()).toMatchObject({ state: "in_sync", behind_by: 0 });
    // the server's history now holds the colleague's commit: what it pushes since descends from it
    expect(remoteLog(bare)).toContain("a note from a colleague");
    git(["--git-dir", bare, "merge-base", "--is-ancestor", sha, (await status()).last_commit_sha!]);

    // nothing left to apply: answered at once
    const again = await sundeck("git", "apply-pending");
    expect(again.code).toBe(0);
    expect(again.stdout).toBe("apply: already up to date\n");
  });

  test("a remote with someone else's history is refused: sync-now exits 1 with the error, status shows it", async () => {
    const foreign = remote.createBare("foreign");
    seedBare(foreign, { "README.md": "not ours\n" });
    // the remote answers only once the command has read the status and asked for its sync, so the worker's own first
    // cycle (started by the change) cannot end before the command looks
    held = gatedRemote(remote.url("foreign"));
    await configure({ enabled: true, remote: held.url, poll_enabled: false, auto_apply_enabled: false });
    await until(async () => (await status()).running === true, { timeout: 20_000, what: "the worker's first cycle" });
    const pending = sundeck("git", "sync-now");
    await until(() => held!.waiting() > 0, { timeout: 10_000, what: "the remote to be asked" });
    // time for the command to start, read the status and post its request
    await Bun.sleep(2000);
    held.open();
    await expectRefused(await pending, foreign);
  });

  test("the same refusal again still ends the wait with exit 1", async () => {
    const before = await status();
    const r = await sundeck("git", "sync-now");
    // the very same error as before: only the attempt time tells the cycle ended
    expect((await status()).last_error).toBe(before.last_error);
    await expectRefused(r, `${remote.root}/foreign.git`);
  });

  test("a key of a role that may not read git sync gets the server's line, exit 1", async () => {
    await s.user("dev", "manage");
    const r = await runSundeck(["git", "status"], { url: s.url, key: s.keyFor("dev").key, home });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toStartWith("sundeck: Forbidden");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });

  test("--detach returns once the server accepted the work", async () => {
    const r = await sundeck("git", "sync-now", "--detach");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("sync accepted; see it with: sundeck git status\n");
  });
});
