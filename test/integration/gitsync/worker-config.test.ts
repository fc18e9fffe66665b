/**
 * The git sync configuration at runtime: super-admin only, validated as the config file is, secrets sealed and
 * write-only, recorded in activity with secrets masked, and the worker restarted with it (enable, point elsewhere,
 * disable).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, setDefaultTimeout } from "bun:test";
import { type GitServer, remoteLog, remotePaths, seedBare, startGitServer } from "../../helpers/git-server";
import { GIT_TOKEN, scanRemote, waitStatus } from "../../helpers/gitsync";
import { startTestServer, type TestServer } from "../../helpers/server";

// git over HTTP with a busy machine: seconds, not milliseconds
setDefaultTimeout(30_000);

let gs: GitServer;
let t: TestServer;
const bares: string[] = [];

beforeAll(async () => {
  gs = startGitServer({ token: GIT_TOKEN });
  t = await startTestServer({}, { gitSync: { debounceMs: 100 } });
});
afterAll(async () => {
  await t.stop();
  await gs.stop();
});
afterEach(() => {
  for (const b of bares) scanRemote(b, [t.ctx.config.master_secret]);
});

let seq = 0;
const bare = () => {
  const name = `cfg${process.pid}-${++seq}`;
  bares.push(gs.createBare(name));
  return { path: bares[bares.length - 1], url: gs.url(name) };
};

describe("GET/PUT /api/git/config", () => {
  it("is for super-admins only", async () => {
    const admin = await t.user("cfg-admin", "admin");
    const manage = await t.user("cfg-manage", "manage");
    expect((await t.anon.get("/api/git/config")).status).toBe(401);
    for (const c of [admin, manage]) {
      expect((await c.get("/api/git/config")).status).toBe(403);
      expect((await c.put("/api/git/config", { enabled: false })).status).toBe(403);
    }
    // admins read the status and run the worker; manage and viewer users do not
    expect((await admin.get("/api/git/status")).status).toBe(200);
    expect((await manage.get("/api/git/status")).status).toBe(403);
    expect((await manage.post("/api/git/sync-now")).status).toBe(403);
  });

  it("answers the file's values first, then the stored ones, secrets masked", async () => {
    const first = await t.root.get("/api/git/config");
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ source: "yaml", enabled: false, branch: "main", https_token: "", webhook_secret: "" });
    expect((await t.root.get("/api/git/status")).json).toMatchObject({ enabled: false, state: "disabled" });
    expect((await t.root.post("/api/git/sync-now")).status).toBe(409);
  });

  it.each([
    ["enabled without a remote", { enabled: true, remote: "" }, "remote"],
    ["a bad branch", { branch: "a b" }, "branch"],
    ["a token with an ssh key", { ssh_key_path: "/k", https_token: "t" }, "https_token"],
    ["a bad duration", { poll_interval: "often" }, "poll_interval"],
    ["a too short poll", { poll_interval: "1s" }, "poll_interval"],
    ["an unknown field", { colour: "blue" }, ""],
  ])("refuses %s with 400", async (_n, body, field) => {
    const r = await t.root.put("/api/git/config", body);
    expect(r.status).toBe(400);
    expect(r.text).toContain(field);
    expect((await t.root.get("/api/git/config")).json.source).toBe("yaml");
  });

  it.each(["/srv/repo.git", "./repo", "file:///srv/repo.git"])(
    "refuses the local remote %s with 400 naming the accepted forms",
    async (remote) => {
      const r = await t.root.put("/api/git/config", { enabled: true, remote });
      expect(r.status).toBe(400);
      expect(r.text).toBe(
        "Bad Request: remote must be an SSH (git@host:path or ssh://host/path), https:// or http:// URL: local paths, file:// and other transports are not supported",
      );
      expect((await t.root.get("/api/git/config")).json.source).toBe("yaml");
    },
  );

  it("stores, seals and masks the secrets, records the change and starts the worker", async () => {
    const b = bare();
    const put = await t.root.put("/api/git/config", {
      enabled: true,
      remote: b.url,
      https_token: GIT_TOKEN,
      webhook_secret: "hook-secret-77",
      poll_enabled: false,
    });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ source: "db", enabled: true, https_token: "********", webhook_secret: "********" });
    const row = t.ctx.db.sqlite.query<{ value: string }, []>("SELECT value FROM settings WHERE key = 'git_sync'").get()!;
    expect(row.value).not.toContain(GIT_TOKEN);
    expect(row.value).not.toContain("hook-secret-77");
    const s = await waitStatus(t.root, (s) => s.state === "in_sync");
    expect(s.enabled).toBe(true);
    expect(remoteLog(b.path).at(-1)).toBe("sundeck: initial state");

    const entry = (await t.root.get("/api/activity?categories=system")).json.entries.find(
      (e: any) => e.action === "git_sync_config_changed",
    );
    expect(entry.sync_status).toBeNull();
    const detail = await t.root.get(`/api/activity/${entry.id}`);
    expect(detail.text).not.toContain(GIT_TOKEN);
    expect(detail.text).not.toContain("hook-secret-77");
    expect(detail.json.after_json.enabled).toBe(true);

    // the mask (or leaving the field out) keeps a secret; the token still works for the next push
    const again = await t.root.put("/api/git/config", { ...put.json, author_name: "Ops Bot" });
    expect(again.status).toBe(200);
    expect(again.json.https_token).toBe("********");
    expect(t.ctx.gitSync.webhookSecret()).toBe("hook-secret-77");
    await waitStatus(t.root, (s) => s.state === "in_sync" && s.last_error === null);
    expect(
      (
        await t.root.post("/api/alerts/rules", {
          name: "cfg-rule",
          app_slug: null,
          kind: "disk",
          threshold: 5,
          duration: "5m",
          webhook_ids: [],
          enabled: true,
        })
      ).status,
    ).toBe(201);
    await waitStatus(t.root, () => remoteLog(b.path).length >= 2, 20_000, "the rule pushed");
  });

  it("a remote with someone else's history is refused after a change of remote", async () => {
    const b = bare();
    seedBare(b.path, { "README.md": "theirs\n" });
    bares.pop(); // a foreign file lives there: not ours to scan
    const r = await t.root.put("/api/git/config", { remote: b.url });
    expect(r.status).toBe(200);
    const s = await waitStatus(t.root, (s) => s.state === "error");
    expect(s.last_error).toContain("already has commits");
    expect(remoteLog(b.path)).toEqual(["someone else's history"]);
  });

  it("an empty token clears it (the remote then refuses), and disabling stops the worker", async () => {
    const b = bare();
    expect((await t.root.put("/api/git/config", { remote: b.url, https_token: "" })).status).toBe(200);
    expect((await t.root.get("/api/git/config")).json.https_token).toBe("");
    const s = await waitStatus(t.root, (s) => s.state === "error");
    expect(s.last_error).toContain("credentials");
    expect(remotePaths(b.path)).toEqual([]);
    const off = await t.root.put("/api/git/config", { enabled: false });
    expect(off.status).toBe(200);
    expect((await t.root.get("/api/git/status")).json).toMatchObject({ enabled: false, state: "disabled", last_error: null });
    expect((await t.root.post("/api/git/apply-pending")).status).toBe(409);
    const hook = await t.anon.post("/api/git/webhook", {});
    expect(hook.status).toBe(404);
    expect(hook.text).toBe("");
  });
});
