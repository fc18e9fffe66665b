/**
 * The git sync repository layer over SSH: the system git against a real OpenSSH server with a generated key, the host
 * key pinned at first contact, and errors worded for a user.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GitSyncError, openRepo, type RemoteAuth } from "../../../src/modules/gitsync/repo";
import {
  git,
  hostileWriter,
  otherClone,
  remoteFile,
  remoteLog,
  remotePaths,
  SAMPLE_APPS,
  specAllowed,
  writeFiles,
} from "../../helpers/git-server";
import { freePort } from "../../helpers/pebble";
import { haveSshd, type Sshd, startSshd } from "../../helpers/sshd";
import { tempDir } from "../../helpers/tmp";

const AUTHOR = { name: "Sundeck Bot", email: "bot@sundeck.test" };
describe.skipIf(!haveSshd && !process.env.CI)("SSH remote (system git, OpenSSH server)", () => {
  let sshd: Sshd;
  const bares: string[] = [];
  beforeAll(async () => {
    sshd = await startSshd();
  });
  afterAll(async () => {
    await sshd?.stop();
  });
  afterEach(() => {
    for (const bare of bares.splice(0)) for (const p of remotePaths(bare)) expect(specAllowed(p)).toBe(true);
  });

  function bareRepo(): string {
    const bare = join(tempDir("sundeck-ssh-remote-"), "apps.git");
    git(["init", "-q", "--bare", "--initial-branch=main", bare]);
    bares.push(bare);
    return bare;
  }

  async function open(remote: string, auth?: Partial<Extract<RemoteAuth, { kind: "ssh" }>>) {
    const apps = tempDir("sundeck-apps-");
    writeFiles(apps, SAMPLE_APPS);
    const data = tempDir("sundeck-data-");
    const knownHostsPath = join(data, "git", "known_hosts");
    const repo = await openRepo({
      workTree: apps,
      gitDir: join(data, "git", "repo"),
      remote,
      auth: { kind: "ssh", keyPath: sshd.keyPath, knownHostsPath, ...auth },
      allowed: specAllowed,
      timeoutMs: 20_000,
    });
    return { repo, apps, knownHostsPath };
  }

  it("pushes the first state, commits, fetches and pulls with a key", async () => {
    const bare = bareRepo();
    const { repo, apps, knownHostsPath } = await open(sshd.url(bare));
    expect(repo.transport).toBe("ssh");
    expect(await repo.remoteState()).toEqual({ reachable: true, empty: true, branchSha: null });
    // accept-new: the host key is pinned at first contact
    expect(readFileSync(knownHostsPath, "utf8")).toContain(sshd.hostKey);

    await repo.firstPush("Initial state", AUTHOR);
    expect(remotePaths(bare)).toEqual([".gitignore", "_global.yml", "web/.env", "web/docker-compose.yml", "web/sundeck.yml"]);

    writeFiles(apps, { "web/.env": "PORT=81\n" });
    expect(await repo.commit("all", "Env", AUTHOR)).not.toBeNull();
    await repo.push();
    expect(remoteFile(bare, "web/.env")).toBe("PORT=81\n");

    const remoteSha = await otherClone(bare).commitAndPush({ "_global.yml": "users: [bob]\n" }, "Remote edit");
    expect(await repo.fetch()).toEqual({ behindBy: 1, aheadBy: 0, remoteSha, skipped: [] });
    const r = await repo.pullLocalWins();
    expect(r).toMatchObject({ applied: ["_global.yml"], conflicts: [], head: remoteSha });
    expect(readFileSync(join(apps, "_global.yml"), "utf8")).toBe("users: [bob]\n");
    expect(readFileSync(join(apps, "web/data/app.sqlite"), "latin1")).toContain("secret rows");
    expect(remoteLog(bare)).toEqual(["Remote edit", "Env", "Initial state"]);
  });

  it("takes the scp-like form user@host:path", async () => {
    const { repo } = await open("git@nonexistent.invalid:team/apps.git");
    expect(repo.transport).toBe("ssh");
    const s = await repo.remoteState();
    expect(s.reachable ? null : s.error.message).toBe("cannot reach nonexistent.invalid (host name not found)");
  });

  it("reports non-fast-forward pushes as such", async () => {
    const bare = bareRepo();
    const { repo, apps } = await open(sshd.url(bare));
    await repo.firstPush("Initial state", AUTHOR);
    await otherClone(bare).commitAndPush({ "web/.env": "PORT=1\n" }, "Remote edit");
    writeFiles(apps, { "_global.yml": "users: [carol]\n" });
    await repo.commit("all", "Local edit", AUTHOR);
    const err = await repo.push().catch((e) => e);
    expect(err).toBeInstanceOf(GitSyncError);
    expect((err as GitSyncError).code).toBe("non_fast_forward");
  });

  it("words a key the server does not accept", async () => {
    const { repo } = await open(sshd.url(bareRepo()), { keyPath: sshd.otherKeyPath });
    const s = await repo.remoteState();
    expect(s.reachable ? null : { code: s.error.code, message: s.error.message }).toEqual({
      code: "auth_failed",
      message: `the remote 127.0.0.1:${sshd.port} refused the SSH key (check ssh_key_path)`,
    });
  });

  it("refuses a host whose key changed since first contact", async () => {
    const { repo, knownHostsPath } = await open(sshd.url(bareRepo()));
    expect((await repo.remoteState()).reachable).toBe(true);
    // pin another key for the same host, as if the server had been replaced
    const other = readFileSync(`${sshd.otherKeyPath}.pub`, "utf8").split(" ").slice(0, 2).join(" ");
    writeFileSync(knownHostsPath, `[127.0.0.1]:${sshd.port} ${other}\n`);
    const s = await repo.remoteState();
    expect(s.reachable ? null : s.error.code).toBe("host_key");
  });

  it("words a missing repository and a closed port", async () => {
    const missing = await open(sshd.url("/nonexistent/repo.git"));
    const a = await missing.repo.remoteState();
    expect(a.reachable ? null : a.error.code).toBe("not_found");
    const port = await freePort();
    const closed = await open(`ssh://${sshd.user}@127.0.0.1:${port}/x.git`);
    const b = await closed.repo.remoteState();
    expect(b.reachable ? null : b.error.message).toBe(`cannot reach 127.0.0.1:${port} (connection refused)`);
  });

  it("fetches a hostile commit (a `..` entry, a 200 MiB file) bounded, skips both, and pushes a merge without them", async () => {
    const bare = bareRepo();
    const { repo, apps } = await open(sshd.url(bare));
    await repo.firstPush("Initial state", AUTHOR);
    const w = hostileWriter(bare);
    const sparse = join(tempDir(), "big");
    Bun.spawnSync(["truncate", "-s", "200M", sparse]);
    const web = w.rootEntries().find((e) => e.name === "web")!;
    const webTree = git(["--git-dir", bare, "ls-tree", web.oid])
      .split("\n")
      .filter(Boolean)
      .map((l) => {
        const [meta, name] = l.split("\t");
        const [mode, , oid] = meta!.split(" ");
        return { mode: mode!, name: name!, oid: name === "docker-compose.yml" ? w.blobOfFile(sparse) : oid! };
      });
    w.commit(
      w.tree([
        ...w.rootEntries().filter((e) => e.name !== "web"),
        { mode: "40000", name: "web", oid: w.tree(webTree) },
        { mode: "40000", name: "..", oid: w.dirWith("x.yml", "x\n") },
        { mode: "40000", name: "api", oid: w.dirWith(".env", "FROM=remote\n") },
      ]),
      "hostile",
    );
    const f = await repo.fetch();
    expect(f.behindBy).toBe(1);
    expect(f.skipped).toEqual([expect.objectContaining({ type: "blob", size: 200 * 1024 * 1024 })]);
    const r = await repo.pullLocalWins();
    expect(r.merged).toBe(true);
    expect(r.skipped.map((s) => s.path).sort()).toEqual(["..", "web/docker-compose.yml"]);
    expect(readFileSync(join(apps, "api/.env"), "utf8")).toBe("FROM=remote\n");
    expect(readFileSync(join(apps, "web/docker-compose.yml"), "utf8")).toBe(SAMPLE_APPS["web/docker-compose.yml"]);
    // the push (the system git, walking the remote's tip as what the remote has) goes through, without the bad entries
    await repo.push();
    expect(remotePaths(bare)).not.toContain("../x.yml");
    expect(remoteFile(bare, "web/docker-compose.yml")).toBe(SAMPLE_APPS["web/docker-compose.yml"]);
    expect(remoteFile(bare, "api/.env")).toBe("FROM=remote\n");
  });

  it("gives up on a server that never answers within the deadline", async () => {
    // accepts TCP and says nothing: ssh waits for a banner that never comes
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      const apps = tempDir("sundeck-apps-");
      const data = tempDir("sundeck-data-");
      const repo = await openRepo({
        workTree: apps,
        gitDir: join(data, "git", "repo"),
        remote: `ssh://git@127.0.0.1:${silent.port}/x.git`,
        auth: { kind: "ssh", keyPath: sshd.keyPath, knownHostsPath: join(data, "git", "known_hosts") },
        allowed: specAllowed,
        timeoutMs: 1500,
      });
      const started = Date.now();
      const s = await repo.remoteState();
      expect(s.reachable ? null : s.error.message).toBe(`127.0.0.1:${silent.port} did not answer within 2 s`);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      silent.stop(true);
    }
  });

  it("does not pass the server's GIT_* environment to the system git", async () => {
    const bare = bareRepo();
    const { repo } = await open(sshd.url(bare));
    const saved = process.env.GIT_CONFIG_PARAMETERS;
    // inherited, this would send every ssh:// URL to a host that does not exist
    process.env.GIT_CONFIG_PARAMETERS = "'url.ssh://nowhere.invalid/.insteadof'='ssh://'";
    try {
      expect(await repo.remoteState()).toMatchObject({ reachable: true, empty: true });
    } finally {
      if (saved === undefined) delete process.env.GIT_CONFIG_PARAMETERS;
      else process.env.GIT_CONFIG_PARAMETERS = saved;
    }
  });
});
