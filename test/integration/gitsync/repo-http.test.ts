/**
 * The git sync repository layer against a real smart-HTTP server (Debian git's http-backend behind a CGI bridge):
 * first push, commit and push, fetch counts, local-wins pull, and the remote's tree holding only allowed files.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "bun:test";
import { linkSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { GitSyncError, type GitSyncErrorCode, openRepo, type RemoteAuth } from "../../../src/modules/gitsync/repo";
import {
  fsck,
  type GitServer,
  git,
  otherClone,
  remoteFile,
  remoteLog,
  remotePaths,
  SAMPLE_APPS,
  seedBare,
  specAllowed,
  startGitServer,
  writeFiles,
} from "../../helpers/git-server";
import { opensslCa, opensslCert } from "../../helpers/tls";
import { tempDir } from "../../helpers/tmp";

const TOKEN = "tok-3f9a1c77e2";
const AUTHOR = { name: "Sundeck Bot", email: "bot@sundeck.test" };

const APPS = SAMPLE_APPS;

let server: GitServer;
const bares: string[] = [];

beforeAll(() => {
  server = startGitServer({ token: TOKEN });
});
afterAll(async () => {
  await server.stop();
});
afterEach(() => {
  // whatever a test did, the remote holds nothing outside the allowed files
  for (const bare of bares.splice(0)) {
    for (const p of remotePaths(bare)) expect(specAllowed(p)).toBe(true);
    // what isomorphic-git wrote reads back as well-formed to git itself
    fsck(bare);
  }
});

let seq = 0;
/** A fresh bare repository on the server and an apps dir (with APPS) opened against it. */
async function setup(opts: { seed?: boolean; files?: Record<string, string>; pushed?: boolean } = {}) {
  const name = `r${++seq}`;
  const bare = server.createBare(name);
  bares.push(bare);
  if (opts.seed) seedBare(bare, { "README.md": "theirs\n" });
  const apps = tempDir("sundeck-apps-");
  writeFiles(apps, opts.files ?? APPS);
  const data = tempDir("sundeck-data-");
  const repo = await openRepo({
    workTree: apps,
    gitDir: join(data, "git", "repo"),
    remote: server.url(name),
    auth: { kind: "token", token: TOKEN },
    allowed: specAllowed,
  });
  if (opts.pushed) await repo.firstPush("Initial state", AUTHOR);
  return { bare, apps, data, repo, url: server.url(name) };
}

/** What remoteState() says about `remote` from a fresh repository: the error's code and message, or "reachable". */
async function remoteError(remote: string, auth: RemoteAuth = { kind: "token", token: TOKEN }) {
  const apps = tempDir("sundeck-apps-");
  const repo = await openRepo({ workTree: apps, gitDir: join(apps, ".git"), remote, auth, allowed: specAllowed });
  const s = await repo.remoteState();
  return s.reachable ? "reachable" : { code: s.error.code, message: s.error.message, detail: s.error.detail ?? "" };
}

async function rejection(p: Promise<unknown>): Promise<GitSyncError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(GitSyncError);
    return e as GitSyncError;
  }
  throw new Error("expected a GitSyncError");
}

/** Every file under a directory, as text (binary is fine: we only search for a string). */
function allText(dir: string): string {
  let out = "";
  for (const e of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, e);
    if (statSync(p).isFile()) out += readFileSync(p, "latin1");
  }
  return out;
}

describe("first push", () => {
  it("sends the current allowed files of an empty remote as the initial commit", async () => {
    const { bare, repo } = await setup();
    expect(await repo.remoteState()).toEqual({ reachable: true, empty: true, branchSha: null });
    const { sha } = await repo.firstPush("Initial state", AUTHOR);
    expect(remotePaths(bare)).toEqual([".gitignore", "_global.yml", "web/.env", "web/docker-compose.yml", "web/sundeck.yml"]);
    expect(remoteLog(bare)).toEqual(["Initial state"]);
    expect(remoteFile(bare, "web/.env")).toBe("PORT=80\n");
    expect(await repo.remoteState()).toEqual({ reachable: true, empty: false, branchSha: sha });
  });

  it("refuses a remote that already has commits and pushes nothing", async () => {
    const { bare, repo } = await setup({ seed: true });
    const before = remoteLog(bare);
    const err = await rejection(repo.firstPush("Initial state", AUTHOR));
    expect(err.code).toBe("remote_not_empty");
    expect(err.message).toContain("already has commits");
    expect(remoteLog(bare)).toEqual(before);
    expect(remotePaths(bare)).toEqual(["README.md"]);
    bares.pop(); // someone else's history: not ours to hold to the policy
  });

  it("initialises an empty apps directory with an empty first commit", async () => {
    const { bare, repo } = await setup({ files: {} });
    await repo.firstPush("Initial state", AUTHOR);
    expect(remoteLog(bare)).toEqual(["Initial state"]);
    expect(remotePaths(bare)).toEqual([]);
  });
});

describe("commit and push", () => {
  it("commits changed allowed files, nothing when unchanged, and pushes them", async () => {
    const { bare, apps, repo } = await setup({ pushed: true });
    writeFiles(apps, { "web/.env": "PORT=8080\n" });
    const sha = await repo.commit(["web/.env"], "Update web env", AUTHOR);
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    expect(await repo.commit(["web/.env"], "Again", AUTHOR)).toBeNull();
    expect(await repo.commit("all", "Everything", AUTHOR)).toBeNull();
    expect(await repo.push()).toEqual({ sha });
    expect(remoteFile(bare, "web/.env")).toBe("PORT=8080\n");
    expect(remoteLog(bare)).toEqual(["Update web env", "Initial state"]);
  });

  it("commits new apps and removed files with all, leaving everything else out", async () => {
    const { bare, apps, repo } = await setup({ pushed: true });
    writeFiles(apps, {
      "api/docker-compose.yml": "services: {}\n",
      "api/.env": "TOKEN=x\n",
      "api/dump.sql": "insert into users",
      "web/sundeck.yml": null,
    });
    expect(await repo.commit("all", "Sync", AUTHOR)).not.toBeNull();
    await repo.push();
    expect(remotePaths(bare)).toEqual([
      ".gitignore",
      "_global.yml",
      "api/.env",
      "api/docker-compose.yml",
      "web/.env",
      "web/docker-compose.yml",
    ]);
  });

  it("never reads a symlink or a hard link standing where an allowed file belongs", async () => {
    const { bare, apps, repo } = await setup({ pushed: true });
    rmSync(join(apps, "web/.env"));
    linkSync(join(apps, "sundeck.db"), join(apps, "web/.env"));
    rmSync(join(apps, "_global.yml"));
    symlinkSync(join(apps, "config.yaml"), join(apps, "_global.yml"));
    writeFiles(apps, { "api/docker-compose.yml": "services: {}\n" });
    symlinkSync(join(apps, "sundeck.db"), join(apps, "api/.env"));
    expect(await repo.commit("all", "Sync", AUTHOR)).not.toBeNull();
    expect(await repo.commit(["web/.env", "_global.yml", "api/.env"], "Again", AUTHOR)).toBeNull();
    await repo.push();
    expect(remoteFile(bare, "web/.env")).toBe(APPS["web/.env"]);
    expect(remoteFile(bare, "_global.yml")).toBe(APPS["_global.yml"]);
    expect(remotePaths(bare)).toContain("api/docker-compose.yml");
    expect(remotePaths(bare)).not.toContain("api/.env");
  });

  it("refuses to commit a path outside the policy", async () => {
    const { repo } = await setup({ pushed: true });
    for (const p of ["sundeck.db", "web/data/app.sqlite", "../etc/passwd", ".git/config"]) {
      const err = await rejection(repo.commit([p], "Leak", AUTHOR));
      expect(err.code).toBe("not_allowed");
    }
  });

  it("reports a push the remote cannot fast-forward", async () => {
    const { bare, apps, repo } = await setup({ pushed: true });
    await otherClone(bare).commitAndPush({ "web/sundeck.yml": "alerts: [cpu]\n" }, "Remote edit");
    writeFiles(apps, { "web/.env": "PORT=81\n" });
    await repo.commit("all", "Local edit", AUTHOR);
    const err = await rejection(repo.push());
    expect(err.code).toBe("non_fast_forward");
    expect(remoteLog(bare)).toEqual(["Remote edit", "Initial state"]);
  });

  it("runs concurrent operations one at a time (no commit lost)", async () => {
    const { bare, apps, repo } = await setup({ pushed: true });
    const slugs = ["a1", "a2", "a3", "a4", "a5"];
    writeFiles(apps, Object.fromEntries(slugs.map((s) => [`${s}/docker-compose.yml`, `# ${s}\n`])));
    const shas = await Promise.all(slugs.map((s) => repo.commit([`${s}/docker-compose.yml`], `Add ${s}`, AUTHOR)));
    expect(new Set(shas).size).toBe(5);
    await repo.idle();
    expect(await repo.head()).toBe(shas[4]!);
    await repo.push();
    expect(remoteLog(bare)).toHaveLength(6);
    for (const s of slugs) expect(remotePaths(bare)).toContain(`${s}/docker-compose.yml`);
  });
});

describe("fetch and local-wins pull", () => {
  it("counts remote commits and applies them to the work tree", async () => {
    const { bare, apps, repo } = await setup({ pushed: true });
    const other = otherClone(bare);
    await other.commitAndPush({ "web/docker-compose.yml": "services:\n  web:\n    image: caddy\n" }, "Use caddy");
    const remoteSha = await other.commitAndPush({ "web/sundeck.yml": null, "api/docker-compose.yml": "services: {}\n" }, "More");
    expect(await repo.fetch()).toEqual({ behindBy: 2, aheadBy: 0, remoteSha, skipped: [] });
    const r = await repo.pullLocalWins();
    expect(r).toMatchObject({ conflicts: [], refused: [], head: remoteSha, merged: false });
    expect(r.applied.sort()).toEqual(["api/docker-compose.yml", "web/docker-compose.yml", "web/sundeck.yml"]);
    expect(readFileSync(join(apps, "web/docker-compose.yml"), "utf8")).toContain("caddy");
    expect(readFileSync(join(apps, "api/docker-compose.yml"), "utf8")).toBe("services: {}\n");
    expect(() => statSync(join(apps, "web/sundeck.yml"))).toThrow();
    // the files it must never touch are still there
    expect(readFileSync(join(apps, "web/data/app.sqlite"), "latin1")).toContain("secret rows");
    expect(await repo.fetch()).toEqual({ behindBy: 0, aheadBy: 0, remoteSha, skipped: [] });
    expect(await repo.commit("all", "Nothing", AUTHOR)).toBeNull();
  });

  it("counts local commits as ahead", async () => {
    const { apps, repo } = await setup();
    const { sha } = await repo.firstPush("Initial state", AUTHOR);
    writeFiles(apps, { "web/.env": "A=1\n" });
    await repo.commit("all", "One", AUTHOR);
    writeFiles(apps, { "web/.env": "A=2\n" });
    await repo.commit("all", "Two", AUTHOR);
    expect(await repo.fetch()).toEqual({ behindBy: 0, aheadBy: 2, remoteSha: sha, skipped: [] });
    expect(await repo.pullLocalWins()).toMatchObject({ applied: [], conflicts: [], merged: false });
  });

  it("keeps the local side of a file both sides changed and lists it, applying the rest", async () => {
    const { bare, apps, repo } = await setup({ pushed: true });
    await otherClone(bare).commitAndPush(
      { "web/docker-compose.yml": "# theirs\n", "web/sundeck.yml": "alerts: [disk]\n" },
      "Remote edits",
    );
    writeFiles(apps, { "web/docker-compose.yml": "# ours\n" });
    await repo.commit("all", "Local edit", AUTHOR);
    expect(await repo.fetch()).toMatchObject({ behindBy: 1, aheadBy: 1 });
    const r = await repo.pullLocalWins({ author: AUTHOR });
    expect(r).toMatchObject({ applied: ["web/sundeck.yml"], conflicts: ["web/docker-compose.yml"], merged: true });
    expect(readFileSync(join(apps, "web/docker-compose.yml"), "utf8")).toBe("# ours\n");
    expect(readFileSync(join(apps, "web/sundeck.yml"), "utf8")).toBe("alerts: [disk]\n");
    expect(await repo.fetch()).toMatchObject({ behindBy: 0, aheadBy: 2 });
    await repo.push();
    expect(remoteFile(bare, "web/docker-compose.yml")).toBe("# ours\n");
    expect(remoteFile(bare, "web/sundeck.yml")).toBe("alerts: [disk]\n");
    expect(remoteLog(bare)[0]).toContain("local kept: web/docker-compose.yml");
  });

  it("keeps an uncommitted local edit over a remote change to the same file", async () => {
    const { bare, apps, data, repo } = await setup({ pushed: true });
    await otherClone(bare).commitAndPush({ "web/.env": "PORT=1\n", "_global.yml": "users: []\n" }, "Remote edits");
    writeFiles(apps, { "web/.env": "PORT=2\n" });
    await repo.fetch();
    const r = await repo.pullLocalWins();
    expect(r).toMatchObject({ applied: ["_global.yml"], conflicts: ["web/.env"] });
    expect(readFileSync(join(apps, "web/.env"), "utf8")).toBe("PORT=2\n");
    // the index follows the branch: git itself sees exactly the one local edit
    expect(git(["--git-dir", join(data, "git", "repo"), "status", "--porcelain"])).toBe(" M web/.env\n");
    // the edit is still a local change that the next commit sends
    expect(await repo.commit("all", "Local env", AUTHOR)).not.toBeNull();
    await repo.push();
    expect(remoteFile(bare, "web/.env")).toBe("PORT=2\n");
    expect(remoteFile(bare, "_global.yml")).toBe("users: []\n");
  });

  it("never writes remote paths outside the policy, unsafe or not plain files", async () => {
    const { bare, apps, repo } = await setup({ pushed: true });
    const other = otherClone(bare);
    writeFiles(other.dir, { "evil.sh": "rm -rf /\n", "web/data/app.sqlite": "replaced", "web/.env": "PORT=9\n" });
    rmSync(join(other.dir, "web/docker-compose.yml"));
    symlinkSync("/etc/passwd", join(other.dir, "web/docker-compose.yml"));
    // -f: the .gitignore we pushed would keep a polite user from adding these
    git(["add", "-A", "-f"], { cwd: other.dir });
    git(["commit", "-q", "-m", "Hostile"], { cwd: other.dir });
    git(["push", "-q", "origin", "HEAD:refs/heads/main"], { cwd: other.dir });
    await repo.fetch();
    const r = await repo.pullLocalWins();
    expect(r.applied).toEqual(["web/.env"]);
    expect(r.ignored.sort()).toEqual(["evil.sh", "web/data/app.sqlite", "web/docker-compose.yml"]);
    expect(() => statSync(join(apps, "evil.sh"))).toThrow();
    expect(readFileSync(join(apps, "web/data/app.sqlite"), "latin1")).toContain("secret rows");
    expect(readFileSync(join(apps, "web/docker-compose.yml"), "utf8")).toBe(APPS["web/docker-compose.yml"]);
    // the merge puts the local compose file back and leaves the foreign files out: once pushed, the remote is clean
    expect(r.merged).toBe(true);
    await repo.push();
    expect(remoteFile(bare, "web/docker-compose.yml")).toBe(APPS["web/docker-compose.yml"]);
    expect(remoteFile(bare, "web/.env")).toBe("PORT=9\n");
  });

  it("leaves a change vet refuses unwritten and puts the local file back", async () => {
    const { bare, apps, repo } = await setup({ pushed: true });
    await otherClone(bare).commitAndPush(
      { "web/docker-compose.yml": "services:\n  web:\n    privileged: true\n", "web/.env": "PORT=3\n" },
      "Hostile compose",
    );
    await repo.fetch();
    const seen: string[] = [];
    const r = await repo.pullLocalWins({
      author: AUTHOR,
      vet: (changes) => {
        for (const c of changes) seen.push(c.path);
        return changes
          .filter((c) => c.content && new TextDecoder().decode(c.content).includes("privileged"))
          .map((c) => ({ path: c.path, reason: "privileged is not allowed" }));
      },
    });
    expect(seen.sort()).toEqual(["web/.env", "web/docker-compose.yml"]);
    expect(r).toMatchObject({
      applied: ["web/.env"],
      refused: [{ path: "web/docker-compose.yml", reason: "privileged is not allowed" }],
      merged: true,
    });
    expect(readFileSync(join(apps, "web/docker-compose.yml"), "utf8")).toBe(APPS["web/docker-compose.yml"]);
    await repo.push();
    expect(remoteFile(bare, "web/docker-compose.yml")).toBe(APPS["web/docker-compose.yml"]);
  });
});

describe("remote errors and credentials", () => {
  it("words a bad token as an authentication failure, without the token", async () => {
    const { url } = await setup();
    const err = await remoteError(url, { kind: "token", token: "wrong-token-value" });
    expect(err).toMatchObject({
      code: "auth_failed",
      message: `the remote 127.0.0.1:${server.port} refused the credentials (check https_username and https_token)`,
    });
    expect(JSON.stringify(err)).not.toContain("wrong-token-value");
  });

  it("says when the remote asks for credentials and none are set", async () => {
    const { url } = await setup();
    expect(await remoteError(url, { kind: "none" })).toMatchObject({
      code: "auth_failed",
      message: `the remote 127.0.0.1:${server.port} asks for credentials and none are set (https_token)`,
    });
  });

  it("words a closed port, a missing repository and an unknown host", async () => {
    const cases: [string, GitSyncErrorCode, string][] = [
      ["http://127.0.0.1:1/x.git", "unreachable", "cannot reach 127.0.0.1:1 (connection refused)"],
      [server.url("missing"), "not_found", `no git repository at the remote 127.0.0.1:${server.port}`],
      ["https://nonexistent.invalid/x.git", "unreachable", "cannot reach nonexistent.invalid (host name not found)"],
    ];
    for (const [remote, code, message] of cases) expect(await remoteError(remote)).toMatchObject({ code, message });
  });

  it("words an untrusted TLS certificate and an expired one", async () => {
    const dir = tempDir("sundeck-git-tls-");
    const cases: [ReturnType<typeof opensslCert>, string][] = [
      [opensslCert(dir, { sans: ["IP:127.0.0.1"] }), "self-signed"],
      [opensslCert(dir, { sans: ["IP:127.0.0.1"], ca: opensslCa(dir), days: -1 }), "expired"],
    ];
    for (const [pem, why] of cases) {
      const tls = startGitServer({ token: TOKEN, tls: { cert: pem.cert, key: pem.key } });
      try {
        tls.createBare("t");
        expect(await remoteError(tls.url("t"))).toMatchObject({
          code: "tls",
          message: `the TLS certificate of 127.0.0.1:${tls.port} is not trusted (${why})`,
        });
      } finally {
        await tls.stop();
      }
    }
  });

  it("gives up on a remote that does not answer, and the next operation still runs", async () => {
    const hung = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Promise<Response>(() => {}) });
    try {
      const { apps, data } = await setup();
      const repo = await openRepo({
        workTree: apps,
        gitDir: join(data, "git", "hung"),
        remote: `http://127.0.0.1:${hung.port}/x.git`,
        auth: { kind: "none" },
        allowed: specAllowed,
        timeoutMs: 1000,
      });
      const started = Date.now();
      const [a, b] = await Promise.all([repo.remoteState(), repo.remoteState()]);
      expect(a.reachable ? null : a.error.message).toBe(`127.0.0.1:${hung.port} did not answer within 1 s`);
      expect(b.reachable ? null : b.error.code).toBe("timeout");
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await hung.stop(true);
    }
  });

  it("does not follow a redirect to another host (the token would go with it)", async () => {
    const seen: string[] = [];
    const other = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (req) => {
        seen.push(req.headers.get("authorization") ?? "");
        return new Response("no", { status: 404 });
      },
    });
    const redirect = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (req) => Response.redirect(`http://localhost:${other.port}${new URL(req.url).pathname}`, 302),
    });
    try {
      expect(await remoteError(`http://127.0.0.1:${redirect.port}/x.git`)).toMatchObject({
        code: "failed",
        message: `the remote 127.0.0.1:${redirect.port} redirects to localhost:${other.port}: set the remote to the final URL`,
      });
      expect(seen).toEqual([]);
    } finally {
      await other.stop(true);
      await redirect.stop(true);
    }
  });

  it("keeps tokens out of .git: the token or URL credentials never land in the git directory", async () => {
    const name = `creds${++seq}`;
    const bare = server.createBare(name);
    bares.push(bare);
    const apps = tempDir("sundeck-apps-");
    writeFiles(apps, APPS);
    const gitDir = join(tempDir("sundeck-data-"), "git", "repo");
    const withCreds = server.url(name).replace("http://", `http://someone:${TOKEN}@`);
    const repo = await openRepo({ workTree: apps, gitDir, remote: withCreds, auth: { kind: "none" }, allowed: specAllowed });
    expect(repo.remoteUrl).toBe(server.url(name));
    await repo.firstPush("Initial state", AUTHOR);
    writeFiles(apps, { "web/.env": "X=1\n" });
    await repo.commit("all", "Edit", AUTHOR);
    await repo.push();
    await repo.fetch();
    expect(allText(gitDir)).not.toContain(TOKEN);
    expect(readFileSync(join(gitDir, "config"), "utf8")).toContain(`url = ${server.url(name)}`);
  });

  it("refuses remotes it has no transport for", async () => {
    const apps = tempDir("sundeck-apps-");
    for (const remote of [
      "/srv/git/repo.git",
      "file:///srv/repo.git",
      "ext::sh -c touch% /tmp/pwned",
      "git://host/x",
      "-oProxyCommand=x:y",
    ]) {
      const err = await rejection(
        openRepo({ workTree: apps, gitDir: join(apps, ".git"), remote, auth: { kind: "none" }, allowed: specAllowed }),
      );
      expect(err.code).toBe("unsupported_remote");
    }
  });
});

describe("loading", () => {
  it("does not load isomorphic-git until a repository is opened", async () => {
    const mod = join(import.meta.dir, "../../../src/modules/gitsync/repo/index.ts");
    const script = `
      const m = await import(${JSON.stringify(mod)});
      const loaded = () => Object.keys(require.cache).some((k) => k.includes("isomorphic-git"));
      const before = loaded();
      m.parseRemote("https://example.test/x.git");
      console.log(JSON.stringify({ before, exports: typeof m.openRepo }));`;
    const p = Bun.spawnSync([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    expect(p.stderr.toString()).toBe("");
    expect(JSON.parse(p.stdout.toString())).toEqual({ before: false, exports: "function" });
  });
});
