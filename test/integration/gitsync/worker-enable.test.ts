/**
 * The git sync worker against a real smart-HTTP server: first enable on an empty remote (initial commit, in sync)
 * and on someone else's non-empty remote (error, nothing pushed), a change through the API pushed with its activity
 * entry marked synced, and the remote holding only allowed files after every test.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, setDefaultTimeout } from "bun:test";
import { renameSync } from "node:fs";
import { createContext } from "../../../src/context";
import { LogSink } from "../../../src/log/logger";
import { startServer } from "../../../src/server";
import { type GitServer, remoteLog, remotePaths, startGitServer } from "../../helpers/git-server";
import { GIT_TOKEN, scanRemote, startSynced, waitStatus } from "../../helpers/gitsync";
import { Client, until } from "../../helpers/http";
import { PASSWORD, type TestServer } from "../../helpers/server";

// git over HTTP with a busy machine: seconds, not milliseconds
setDefaultTimeout(30_000);

let gs: GitServer;
const running: { t: TestServer; bare: string; foreign: string[] }[] = [];

beforeAll(() => {
  gs = startGitServer({ token: GIT_TOKEN });
});
afterAll(async () => {
  await gs.stop();
});
afterEach(async () => {
  for (const { t, bare, foreign } of running.splice(0)) {
    await t.stop();
    scanRemote(bare, [t.ctx.config.master_secret], foreign);
  }
});

async function setup(o: Parameters<typeof startSynced>[1] = {}) {
  const s = await startSynced(gs, o);
  running.push(s);
  return s;
}

const RULE = { name: "disk-low", app_slug: null, kind: "disk", threshold: 10, duration: "5m", webhook_ids: [], enabled: true };

describe("first enable", () => {
  it("pushes the current state to an empty remote as the initial commit", async () => {
    const { t, bare } = await setup();
    const s = await waitStatus(t.root, (s) => s.state === "in_sync");
    expect(s.enabled).toBe(true);
    expect(s.last_error).toBeNull();
    expect(s.last_commit_sha).toMatch(/^[0-9a-f]{40}$/);
    // the initial commit first (the first user, created right after start, may follow in a second commit)
    expect(remoteLog(bare).at(-1)).toBe("sundeck: initial state");
    expect(remotePaths(bare)).toEqual([".gitignore", "_global.yml"]);
    expect(s.last_sync_at).not.toBeNull();
  });

  it("refuses a remote that already has someone else's commits, pushing nothing", async () => {
    const { t, bare } = await setup({ seed: true });
    const s = await waitStatus(t.root, (s) => s.state === "error");
    expect(s.last_error).toContain("already has commits");
    expect(remoteLog(bare)).toEqual(["someone else's history"]);
    // a change made meanwhile is not pushed either
    expect((await t.root.post("/api/alerts/rules", RULE)).status).toBe(201);
    await t.root.post("/api/git/sync-now");
    // the retry ends with the same error: only the attempt time tells it ran
    const again = await waitStatus(t.root, (x) => x.state === "error" && x.last_attempt_at !== s.last_attempt_at);
    expect(again.last_error).toBe(s.last_error);
    expect(again.last_sync_at).toBeNull();
    expect(remoteLog(bare)).toEqual(["someone else's history"]);
    expect(remotePaths(bare)).toEqual(["README.md"]);
  });
});

describe("push", () => {
  it("commits and pushes a change made through the API and marks its activity entry synced with the commit", async () => {
    const { t, bare } = await setup();
    await waitStatus(t.root, (s) => s.state === "in_sync");
    const created = await t.root.post("/api/alerts/rules", RULE);
    expect(created.status).toBe(201);
    const entry = await until(
      async () => {
        const r = await t.root.get("/api/activity?categories=alert");
        const e = r.json.entries.find((x: any) => x.action === "alert_rule_created");
        return e?.sync_status === "synced" ? e : null;
      },
      { timeout: 20_000, what: "the entry synced" },
    );
    const head = (await waitStatus(t.root, (s) => s.last_commit_sha === entry.sync_commit_sha)).last_commit_sha;
    expect(entry.sync_commit_sha).toBe(head);
    expect(remoteLog(bare)[0]).toContain("disk-low");
    const { remoteFile } = await import("../../helpers/git-server");
    expect(remoteFile(bare, "_global.yml")).toContain("disk-low");
  });

  it("leaves runtime-only entries without a badge", async () => {
    const { t } = await setup();
    await waitStatus(t.root, (s) => s.state === "in_sync");
    const r = await t.root.put("/api/system/public-host", { public_host: "example.test" });
    expect(r.status).toBe(200);
    const list = await t.root.get("/api/activity?categories=system");
    const e = list.json.entries.find((x: any) => x.action === "public_host_changed");
    expect(e.sync_status).toBeNull();
  });

  it("marks the entries of a failed push failed, with the error, and synced once a later push carries them", async () => {
    const s = await setup();
    await waitStatus(s.t.root, (x) => x.state === "in_sync");
    running.splice(running.indexOf(s), 1);
    // the repository disappears from the server: the next push fails
    renameSync(s.bare, `${s.bare}.away`);
    try {
      expect((await s.t.root.post("/api/alerts/rules", RULE)).status).toBe(201);
      const entry = await until(
        async () => {
          const r = await s.t.root.get("/api/activity?categories=alert");
          const e = r.json.entries.find((x: any) => x.action === "alert_rule_created");
          return e?.sync_status === "failed" ? e : null;
        },
        { timeout: 20_000, what: "the entry failed" },
      );
      expect(entry.sync_commit_sha).toBeNull();
      expect(entry.sync_error).toContain("no git repository");
      const st = await waitStatus(s.t.root, (x) => x.state === "error");
      expect(st.last_error).toBe(entry.sync_error);
      // the repository is back: the next cycle pushes the commit, and the entry it carries turns synced
      renameSync(`${s.bare}.away`, s.bare);
      expect((await s.t.root.post("/api/git/sync-now")).status).toBe(202);
      const back = await waitStatus(s.t.root, (x) => x.state === "in_sync" && x.last_commit_sha !== st.last_commit_sha);
      const after = (await s.t.root.get("/api/activity?categories=alert")).json.entries.find((x: any) => x.id === entry.id);
      expect(after).toMatchObject({ sync_status: "synced", sync_commit_sha: back.last_commit_sha, sync_error: null });
    } finally {
      await s.t.stop();
    }
  });
});

describe("restart", () => {
  it("continues its own history on the next start instead of refusing the non-empty remote", async () => {
    const s = await setup();
    await waitStatus(s.t.root, (x) => x.state === "in_sync");
    running.splice(running.indexOf(s), 1);
    await s.t.stop();
    const before = remoteLog(s.bare).length;
    const ctx = createContext(s.t.ctx.config, { logs: new LogSink({ stdout: false }), gitSync: { debounceMs: 100 } });
    const srv = await startServer(ctx);
    try {
      const root = new Client(srv.url);
      expect((await root.post("/api/auth/login", { username: "root", password: PASSWORD })).status).toBe(200);
      const st = await waitStatus(root, (x) => x.last_attempt_at !== null && x.state === "in_sync");
      expect(st.last_error).toBeNull();
      expect((await root.post("/api/alerts/rules", RULE)).status).toBe(201);
      await until(() => remoteLog(s.bare).length > before, { timeout: 20_000, what: "the change pushed" });
      expect(remoteLog(s.bare).at(-1)).toBe("sundeck: initial state");
    } finally {
      await srv.stop();
    }
    scanRemote(s.bare, [s.t.ctx.config.master_secret]);
  });
});
