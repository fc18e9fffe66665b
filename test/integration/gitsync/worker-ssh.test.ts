/**
 * The worker over the other ways in: an SSH remote (system git, a real OpenSSH server, `ssh_key_path`), and the poll
 * loop bringing in a remote commit without being asked (fetch-only, so it is counted).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, setDefaultTimeout } from "bun:test";
import { join } from "node:path";
import { type GitServer, git, otherClone, remoteFile, remoteLog, startGitServer } from "../../helpers/git-server";
import { GIT_TOKEN, scanRemote, startSynced, waitStatus } from "../../helpers/gitsync";
import { until } from "../../helpers/http";
import type { TestServer } from "../../helpers/server";
import { haveSshd, type Sshd, startSshd } from "../../helpers/sshd";
import { tempDir } from "../../helpers/tmp";

const running: { t: TestServer; bare: string }[] = [];
afterEach(async () => {
  for (const { t, bare } of running.splice(0)) {
    await t.stop();
    scanRemote(bare, [t.ctx.config.master_secret]);
  }
});

const RULE = { name: "cpu-hot", app_slug: null, kind: "cpu", threshold: 90, duration: "5m", webhook_ids: [], enabled: true };

setDefaultTimeout(60_000);

describe.skipIf(!haveSshd && !process.env.CI)("SSH remote", () => {
  let sshd: Sshd;
  beforeAll(async () => {
    sshd = await startSshd();
  });
  afterAll(async () => {
    await sshd?.stop();
  });

  it("pushes the initial state and a change through the system git with the configured key", async () => {
    const bare = join(tempDir("sundeck-ssh-remote-"), "apps.git");
    git(["init", "-q", "--bare", "--initial-branch=main", bare]);
    const { startTestServer } = await import("../../helpers/server");
    const t = await startTestServer(
      {
        git_sync: {
          enabled: true,
          remote: sshd.url(bare),
          ssh_key_path: sshd.keyPath,
          poll_enabled: false,
        } as any,
      },
      { gitSync: { debounceMs: 100 } },
    );
    running.push({ t, bare });
    const s = await waitStatus(t.root, (x) => x.state === "in_sync", 30_000);
    expect(remoteLog(bare).at(-1)).toBe("sundeck: initial state");
    expect(s.last_commit_sha).toMatch(/^[0-9a-f]{40}$/);
    expect((await t.root.post("/api/alerts/rules", RULE)).status).toBe(201);
    await until(() => remoteFile(bare, "_global.yml").includes("cpu-hot"), { timeout: 30_000, what: "the rule pushed" });
  });
});

describe("poll loop", () => {
  let gs: GitServer;
  beforeAll(() => {
    gs = startGitServer({ token: GIT_TOKEN });
  });
  afterAll(async () => {
    await gs.stop();
  });

  it("counts a remote commit without being asked", async () => {
    const s = await startSynced(gs, { git: { poll_enabled: true, poll_interval: "1s", auto_apply_enabled: false } });
    running.push(s);
    await waitStatus(s.t.root, (x) => x.state === "in_sync");
    await until(() => remoteLog(s.bare).length > 0, { what: "the initial commit" });
    const other = otherClone(s.bare);
    await other.commitAndPush(
      { "_global.yml": `${await Bun.file(join(other.dir, "_global.yml")).text()}# a comment\n` },
      "comment",
    );
    const st = await waitStatus(s.t.root, (x) => x.state === "behind", 15_000);
    expect(st.behind_by).toBe(1);
  });
});
