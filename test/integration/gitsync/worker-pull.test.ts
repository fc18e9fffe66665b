/**
 * Remote changes coming back through the worker (real smart-HTTP server): fetch-only mode counts the commits until
 * apply-pending applies them as the git sync actor; a change made here and on the remote to the same file keeps the
 * local one and is recorded in alert history and the status; the webhook (good, bad, missing signature, disabled).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, setDefaultTimeout } from "bun:test";
import { createHmac } from "node:crypto";
import { type GitServer, otherClone, remoteFile, startGitServer } from "../../helpers/git-server";
import { GIT_TOKEN, scanRemote, startSynced, WEBHOOK_SECRET, waitStatus } from "../../helpers/gitsync";
import { until } from "../../helpers/http";
import type { TestServer } from "../../helpers/server";

// git over HTTP with a busy machine: seconds, not milliseconds
setDefaultTimeout(30_000);

let gs: GitServer;
const running: { t: TestServer; bare: string }[] = [];

beforeAll(() => {
  gs = startGitServer({ token: GIT_TOKEN });
});
afterAll(async () => {
  await gs.stop();
});
afterEach(async () => {
  for (const { t, bare } of running.splice(0)) {
    await t.stop();
    scanRemote(bare, [t.ctx.config.master_secret]);
  }
});

const RULE = { name: "disk-low", app_slug: null, kind: "disk", threshold: 10, duration: "5m", webhook_ids: [], enabled: true };

/** A server in sync with a fresh remote, holding the rule `disk-low` (pushed). */
async function setup(git: NonNullable<Parameters<typeof startSynced>[1]>["git"] = {}) {
  const s = await startSynced(gs, { git });
  running.push(s);
  await waitStatus(s.t.root, (st) => st.state === "in_sync");
  const rule = await s.t.root.post("/api/alerts/rules", RULE);
  expect(rule.status).toBe(201);
  await until(() => remoteFile(s.bare, "_global.yml").includes("disk-low"), { timeout: 20_000, what: "the rule pushed" });
  return { ...s, ruleId: rule.json.id as number };
}

/** Someone else changes the rule's threshold on the remote. */
async function remoteEdit(bare: string, threshold: number) {
  const other = otherClone(bare);
  const text = await Bun.file(`${other.dir}/_global.yml`).text();
  expect(text).toContain("threshold: 10");
  return other.commitAndPush(
    { "_global.yml": text.replace("threshold: 10", `threshold: ${threshold}`) },
    "raise the disk threshold",
  );
}

const sign = (body: string, secret = WEBHOOK_SECRET) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

describe("fetch-only mode", () => {
  it("counts remote commits, then apply-pending applies them as git_sync", async () => {
    const { t, bare, ruleId } = await setup({ auto_apply_enabled: false });
    const theirs = await remoteEdit(bare, 25);
    expect((await t.root.post("/api/git/sync-now")).status).toBe(202);
    const behind = await waitStatus(t.root, (s) => s.state === "behind");
    expect(behind.behind_by).toBe(1);
    expect((await ruleOf(t, ruleId)).threshold).toBe(10);

    const applied = await t.root.post("/api/git/apply-pending");
    expect(applied.status).toBe(202);
    const s = await waitStatus(t.root, (s) => s.state === "in_sync" && s.behind_by === 0);
    expect(s.last_error).toBeNull();
    expect((await ruleOf(t, ruleId)).threshold).toBe(25);
    const entry = (await t.root.get("/api/activity?categories=alert")).json.entries.find(
      (e: any) => e.action !== "alert_rule_created" && e.actor_source === "git_sync",
    );
    expect(entry).toBeDefined();
    // the remote's commit is part of our history now (a fast-forward: nothing of ours to merge)
    expect(s.last_commit_sha).toBe(theirs);

    // already up to date: answers at once
    expect((await t.root.post("/api/git/apply-pending")).status).toBe(200);
  });
});

async function ruleOf(t: TestServer, id: number) {
  return (await t.root.get("/api/alerts/rules")).json.find((r: any) => r.id === id);
}

describe("conflicts", () => {
  it("keeps the local change when both sides changed the same file, and records the conflict", async () => {
    const { t, bare, ruleId } = await setup();
    await remoteEdit(bare, 30);
    // a local change to the same rule: its push is refused (not a fast-forward), the remote's commit comes in
    expect((await t.root.put(`/api/alerts/rules/${ruleId}`, { ...RULE, threshold: 15 })).status).toBe(200);
    const s = await waitStatus(t.root, (s) => s.state === "conflict");
    expect(s.conflicts.map((c: any) => c.path)).toContain("_global.yml");
    expect((await ruleOf(t, ruleId)).threshold).toBe(15);
    const history = (await t.root.get("/api/alerts/history")).json.entries;
    expect(history.some((h: any) => h.kind === "git_sync_conflict" && h.message.includes("_global.yml"))).toBe(true);
    // local won: the merge is pushed, and the remote holds the local value
    await until(() => remoteFile(bare, "_global.yml").includes("threshold: 15"), { timeout: 20_000, what: "the merge pushed" });
    const update = (await t.root.get("/api/activity?categories=alert")).json.entries.find(
      (e: any) => e.actor_source !== "git_sync" && e.action !== "alert_rule_created",
    );
    expect(update.sync_status).toBe("synced");
  });
});

describe("webhook", () => {
  it("triggers a sync on a good signature and refuses bad or missing ones", async () => {
    const { t, bare } = await setup({ auto_apply_enabled: false });
    await remoteEdit(bare, 40);
    const body = JSON.stringify({ ref: "refs/heads/main" });
    const bad: Record<string, string>[] = [
      {},
      { "x-hub-signature-256": sign(body, "wrong-secret") },
      { "x-hub-signature-256": "sha256=zz" },
    ];
    for (const headers of bad) {
      const r = await t.anon.request("POST", "/api/git/webhook", body, { "content-type": "application/json", ...headers });
      expect(r.status).toBe(401);
    }
    expect((await t.root.get("/api/git/status")).json.behind_by).toBe(0);
    const ok = await t.anon.request("POST", "/api/git/webhook", body, {
      "content-type": "application/json",
      "x-hub-signature-256": sign(body),
    });
    expect(ok.status).toBe(202);
    expect((await waitStatus(t.root, (s) => s.state === "behind")).behind_by).toBe(1);
    // the signature is over the exact bytes: the same JSON re-encoded does not pass
    const spaced = JSON.stringify({ ref: "refs/heads/main" }, null, 1);
    const r = await t.anon.request("POST", "/api/git/webhook", spaced, {
      "content-type": "application/json",
      "x-hub-signature-256": sign(body),
    });
    expect(r.status).toBe(401);
  });

  it("answers 404 with an empty body when webhook_enabled is false", async () => {
    const { t } = await setup({ webhook_enabled: false });
    const body = "{}";
    const r = await t.anon.request("POST", "/api/git/webhook", body, { "x-hub-signature-256": sign(body) });
    expect(r.status).toBe(404);
    expect(r.text).toBe("");
  });
});
