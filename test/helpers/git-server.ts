/**
 * A real smart-HTTP git server for tests: Debian git's `git http-backend` run as CGI behind a small Bun.serve bridge,
 * serving bare repositories under a temp root, with an optional basic-auth token check (every request, read or write)
 * and optional TLS. Helpers drive a second, independent clone with the system git, as another user of the remote would.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./tmp";

export interface GitServerOptions {
  /** When set, every request must carry basic auth with this password (any username unless `username` is set). */
  token?: string;
  username?: string;
  /** Serve HTTPS with this certificate and key (PEM). */
  tls?: { cert: string; key: string };
}

export interface GitServer {
  /** Where the bare repositories live (`<root>/<name>.git`). */
  root: string;
  port: number;
  /** The URL of repository `name` (no credentials in it). */
  url(name: string): string;
  /** Create an empty bare repository `name` whose HEAD is `refs/heads/<branch>`; returns its path. */
  createBare(name: string, branch?: string): string;
  /** Request lines seen so far (`METHOD path status`), for tests that check what was asked. */
  requests: string[];
  stop(): Promise<void>;
}

/** The environment every system git call in tests runs with: no user or system config, no prompts. */
export function gitEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: "/nonexistent",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: "Remote User",
    GIT_AUTHOR_EMAIL: "remote@example.test",
    GIT_COMMITTER_NAME: "Remote User",
    GIT_COMMITTER_EMAIL: "remote@example.test",
    ...extra,
  };
}

/** Run the system git; throws with stderr on failure, returns stdout. */
export function git(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): string {
  const p = Bun.spawnSync(["git", ...args], { cwd: opts.cwd, env: gitEnv(opts.env), stdout: "pipe", stderr: "pipe" });
  if (p.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${p.stderr.toString()}`);
  return p.stdout.toString();
}

/** One entry of a raw tree object. */
export interface RawEntry {
  mode: string;
  name: string;
  oid: string;
}

/**
 * Objects made as a hostile pusher makes them, written straight into a bare repository (`--literally`: no checks,
 * and nothing on the way in fsck's them): raw trees with any names, in any order, and commits moving its branch.
 */
export function hostileWriter(bare: string, branch = "main") {
  const run = (args: string[], input?: Uint8Array) => {
    const p = Bun.spawnSync(["git", "--git-dir", bare, ...args], { env: gitEnv(), stdin: input, stdout: "pipe", stderr: "pipe" });
    if (p.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${p.stderr.toString()}`);
    return p.stdout.toString().trim();
  };
  const object = (type: string, bytes: Uint8Array) => run(["hash-object", "-t", type, "--literally", "-w", "--stdin"], bytes);
  const tree = (entries: RawEntry[]) =>
    object(
      "tree",
      Buffer.concat(entries.map((e) => Buffer.concat([Buffer.from(`${e.mode} ${e.name}\0`), Buffer.from(e.oid, "hex")]))),
    );
  return {
    object,
    tree,
    /** A blob of `content`. */
    blob: (content: string | Uint8Array) => object("blob", typeof content === "string" ? Buffer.from(content) : content),
    /** A blob of a file on disk (a sparse file stays cheap: git hashes and compresses it). */
    blobOfFile: (path: string) => run(["hash-object", "-w", path]),
    /** A tree holding one file. */
    dirWith: (name: string, content: string) => tree([{ mode: "100644", name, oid: object("blob", Buffer.from(content)) }]),
    /** The entries of the branch's root tree. */
    rootEntries(): RawEntry[] {
      return run(["ls-tree", branch])
        .split("\n")
        .filter(Boolean)
        .map((l) => {
          const [meta, name] = l.split("\t");
          const [mode, , oid] = meta!.split(" ");
          return { mode: mode === "040000" ? "40000" : mode!, name: name!, oid: oid! };
        });
    },
    /** Commit the branch's root with `extra` entries added (and entries named in `drop` taken out); the commit's id. */
    commitWith(extra: RawEntry[], message: string, drop: string[] = []): string {
      return this.commit(tree([...this.rootEntries().filter((e) => !drop.includes(e.name)), ...extra]), message);
    },
    /** Commit `treeOid` on top of the branch and move the branch there, as a push would; the commit's id. */
    commit(treeOid: string, message: string): string {
      const sha = run(["commit-tree", treeOid, "-p", branch, "-m", message]);
      run(["update-ref", `refs/heads/${branch}`, sha]);
      return sha;
    },
  };
}

/** Every path in `ref` of a bare repository (empty when the ref does not exist). */
export function remotePaths(bare: string, ref = "main"): string[] {
  const p = Bun.spawnSync(["git", "--git-dir", bare, "ls-tree", "-r", "--name-only", ref], {
    env: gitEnv(),
    stdout: "pipe",
    stderr: "pipe",
  });
  if (p.exitCode !== 0) return [];
  return p.stdout.toString().split("\n").filter(Boolean).sort();
}

/** `git fsck --strict` of a bare repository: throws when any object or ref is malformed. */
export function fsck(bare: string): void {
  git(["--git-dir", bare, "fsck", "--strict", "--no-progress", "--no-dangling"]);
}

/** The content of `path` at `ref` in a bare repository. */
export function remoteFile(bare: string, path: string, ref = "main"): string {
  return git(["--git-dir", bare, "show", `${ref}:${path}`]);
}

/** Commit subjects of `ref` in a bare repository, newest first. */
export function remoteLog(bare: string, ref = "main"): string[] {
  return git(["--git-dir", bare, "log", "--format=%s", ref]).split("\n").filter(Boolean);
}

/**
 * Another user of the remote: clone it (through the bare path, as the server's own git would), let the test change
 * files, commit and push straight into the bare repository.
 */
export function otherClone(bare: string, branch = "main") {
  const dir = join(tempDir("sundeck-git-other-"), "clone");
  git(["clone", "-q", "-b", branch, bare, dir]);
  return {
    dir,
    /** Write files (null deletes), commit them with `message` and push. */
    async commitAndPush(files: Record<string, string | null>, message: string): Promise<string> {
      for (const [path, content] of Object.entries(files)) {
        if (content === null) git(["rm", "-q", "--", path], { cwd: dir });
        else {
          await Bun.write(join(dir, path), content);
          git(["add", "--", path], { cwd: dir });
        }
      }
      git(["commit", "-q", "-m", message], { cwd: dir });
      git(["push", "-q", "origin", `HEAD:refs/heads/${branch}`], { cwd: dir });
      return git(["rev-parse", "HEAD"], { cwd: dir }).trim();
    },
  };
}

/** Give an empty bare repository a first commit made elsewhere (someone else's history). */
export function seedBare(bare: string, files: Record<string, string>, branch = "main"): string {
  const dir = join(tempDir("sundeck-git-seed-"), "seed");
  git(["init", "-q", `--initial-branch=${branch}`, dir]);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  git(["add", "-A"], { cwd: dir });
  git(["commit", "-q", "-m", "someone else's history"], { cwd: dir });
  git(["push", "-q", bare, `HEAD:refs/heads/${branch}`], { cwd: dir });
  return git(["rev-parse", "HEAD"], { cwd: dir }).trim();
}

/**
 * The files layer's policy as the spec states it (a stand-in: the real one lives in modules/gitsync/files):
 * `<slug>/docker-compose.yml`, `<slug>/.env`, `<slug>/sundeck.yml`, `_global.yml`, `.gitignore`.
 */
export function specAllowed(path: string): boolean {
  return /^(_global\.yml|\.gitignore|[a-z0-9][a-z0-9-]*\/(docker-compose\.yml|\.env|sundeck\.yml))$/.test(path);
}

/** An apps directory as the apps module leaves it, with things that must never be committed next to the spec's files. */
export const SAMPLE_APPS: Record<string, string> = {
  "web/docker-compose.yml": "services:\n  web:\n    image: nginx\n",
  "web/.env": "PORT=80\n",
  "web/sundeck.yml": "alerts: []\n",
  "_global.yml": "users:\n  - alice\n",
  ".gitignore": "*\n!*/\n!*/docker-compose.yml\n!*/.env\n!*/sundeck.yml\n!_global.yml\n!.gitignore\n",
  "web/data/app.sqlite": "SQLite format 3\u0000secret rows",
  "web/notes.md": "not a sync file\n",
  "config.yaml": "master_secret: hunter2\n",
  "sundeck.db": "SQLite format 3\u0000users and hashes",
};

/** Write files under `dir` (null deletes). */
export function writeFiles(dir: string, files: Record<string, string | null>): void {
  for (const [path, content] of Object.entries(files)) {
    const abs = join(dir, path);
    if (content === null) rmSync(abs, { force: true });
    else {
      mkdirSync(join(abs, ".."), { recursive: true });
      writeFileSync(abs, content);
    }
  }
}

/** Start the smart-HTTP bridge on a free loopback port. */
export function startGitServer(opts: GitServerOptions = {}): GitServer {
  const root = tempDir("sundeck-git-root-");
  const requests: string[] = [];
  const expected = opts.token === undefined ? null : opts.token;

  const authorised = (req: Request): string | null => {
    if (expected === null) return "anonymous";
    const h = req.headers.get("authorization") ?? "";
    if (!h.startsWith("Basic ")) return null;
    const decoded = Buffer.from(h.slice(6), "base64").toString();
    const i = decoded.indexOf(":");
    const user = decoded.slice(0, i);
    const pass = decoded.slice(i + 1);
    if (pass !== expected) return null;
    if (opts.username !== undefined && user !== opts.username) return null;
    return user || "token";
  };

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: opts.tls,
    async fetch(req) {
      const url = new URL(req.url);
      const user = authorised(req);
      if (!user) {
        requests.push(`${req.method} ${url.pathname} 401`);
        return new Response("auth required\n", { status: 401, headers: { "www-authenticate": 'Basic realm="git"' } });
      }
      const body = req.method === "POST" ? new Uint8Array(await req.arrayBuffer()) : new Uint8Array();
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.replace(/^\?/, ""),
        REQUEST_METHOD: req.method,
        CONTENT_TYPE: req.headers.get("content-type") ?? "",
        CONTENT_LENGTH: String(body.length),
        REMOTE_USER: user,
        REMOTE_ADDR: "127.0.0.1",
      };
      const enc = req.headers.get("content-encoding");
      if (enc) env.HTTP_CONTENT_ENCODING = enc;
      const proto = req.headers.get("git-protocol");
      if (proto) env.GIT_PROTOCOL = proto;
      const proc = Bun.spawn(["git", "http-backend"], { env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
      proc.stdin.write(body);
      await proc.stdin.end();
      const out = new Uint8Array(await new Response(proc.stdout).arrayBuffer());
      await proc.exited;
      const reply = parseCgi(out);
      requests.push(`${req.method} ${url.pathname}${url.search} ${reply.status}`);
      return new Response(reply.body, { status: reply.status, headers: reply.headers });
    },
  });
  const scheme = opts.tls ? "https" : "http";

  return {
    root,
    port: server.port as number,
    url: (name) => `${scheme}://127.0.0.1:${server.port}/${name}.git`,
    createBare(name, branch = "main") {
      const path = join(root, `${name}.git`);
      mkdirSync(path, { recursive: true });
      git(["init", "-q", "--bare", `--initial-branch=${branch}`, path]);
      return path;
    },
    requests,
    stop: async () => {
      await server.stop(true);
    },
  };
}

/** Split CGI output into status, headers and body. */
function parseCgi(out: Uint8Array<ArrayBuffer>): { status: number; headers: Headers; body: Uint8Array<ArrayBuffer> } {
  let end = -1;
  let sep = 0;
  for (let i = 0; i < out.length - 1; i++) {
    if (out[i] === 10 && out[i + 1] === 10) {
      end = i;
      sep = 2;
      break;
    }
    if (out[i] === 13 && out[i + 1] === 10 && out[i + 2] === 13 && out[i + 3] === 10) {
      end = i;
      sep = 4;
      break;
    }
  }
  if (end < 0) return { status: 502, headers: new Headers(), body: out };
  const headers = new Headers();
  let status = 200;
  for (const line of new TextDecoder().decode(out.subarray(0, end)).split(/\r?\n/)) {
    const i = line.indexOf(":");
    if (i < 0) continue;
    const name = line.slice(0, i).trim();
    const value = line.slice(i + 1).trim();
    if (name.toLowerCase() === "status") status = Number.parseInt(value, 10);
    else headers.append(name, value);
  }
  return { status, headers, body: out.subarray(end + sep) };
}
