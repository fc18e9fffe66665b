/**
 * Git sync worker tests: a Sundeck server whose git sync points at a repository of the smart-HTTP test server, and
 * the checks every test ends with (a clone of the remote holds only the allowed files and no secret).
 */

import { expect } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { Config } from "../../src/config/schema";
import type { ContextOptions } from "../../src/context";
import { allowed } from "../../src/modules/gitsync/files/paths";
import { ensureTestImages, requireDocker } from "./docker";
import { type GitServer, git, seedBare } from "./git-server";
import { type Client, until } from "./http";
import { startTestServer, type TestServer } from "./server";
import { tempDir } from "./tmp";

export const GIT_TOKEN = "tok-worker-8c1d55e0a9";
export const WEBHOOK_SECRET = "whsec-4b2e0f9d1c";

let seq = 0;

export interface SyncSetup {
  t: TestServer;
  bare: string;
  url: string;
  /** Files the remote had before Sundeck came (a seeded remote). */
  foreign: string[];
}

/** A fresh bare repository (seeded with someone else's history when `seed`) and a server syncing with it. */
export async function startSynced(
  gs: GitServer,
  o: { seed?: boolean; git?: Partial<Config["git_sync"]>; docker?: boolean; over?: Partial<Config>; opts?: ContextOptions } = {},
): Promise<SyncSetup> {
  const name = `w${process.pid}-${++seq}`;
  const bare = gs.createBare(name);
  if (o.seed) seedBare(bare, { "README.md": "theirs\n" });
  const git_sync = {
    enabled: true,
    remote: gs.url(name),
    https_token: GIT_TOKEN,
    author_name: "Sundeck Test",
    author_email: "sundeck@test.example",
    poll_enabled: false,
    webhook_secret: WEBHOOK_SECRET,
    ...o.git,
  };
  const over = { ...o.over, git_sync } as Parameters<typeof startTestServer>[0];
  const opts = { ...o.opts, gitSync: { debounceMs: 100 } };
  if (o.docker) {
    await requireDocker();
    await ensureTestImages();
  }
  // with Docker: short deploy timings and no periodic reconcile (as test/helpers/apps.ts)
  const timings = o.docker
    ? { stabilizeMs: 30_000, settleMs: 500, reconcileEveryMs: 3_600_000, reconcileDebounceMs: 150, statusEveryMs: 2_000 }
    : undefined;
  const t = await startTestServer(over, { ...opts, timings });
  return { t, bare, url: gs.url(name), foreign: o.seed ? ["README.md"] : [] };
}

/** Wait for the status to satisfy `pred`; returns it. */
export async function waitStatus(c: Client, pred: (s: any) => boolean, timeout = 20_000, what = "git status"): Promise<any> {
  let last: any;
  try {
    return await until(
      async () => {
        const r = await c.get("/api/git/status");
        last = r.json;
        return r.status === 200 && !r.json.running && pred(r.json) ? r.json : null;
      },
      { timeout, every: 50, what },
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}; last status: ${JSON.stringify(last)}`);
  }
}

/** Every file of a directory tree (relative paths), skipping `.git`. */
function walk(root: string, dir = root, out: string[] = []): string[] {
  for (const e of readdirSync(dir)) {
    if (dir === root && e === ".git") continue;
    const p = join(dir, e);
    if (statSync(p).isDirectory()) walk(root, p, out);
    else out.push(relative(root, p));
  }
  return out;
}

/**
 * Clone the remote and check every file of every commit's final tree: only the allowed paths, and none of the
 * secrets (`secrets`: the token, the master secret, password hashes). Returns the paths of the branch's tree.
 */
export function scanRemote(bare: string, secrets: string[] = [], foreign: string[] = []): string[] {
  const dir = join(tempDir("sundeck-git-scan-"), "clone");
  const heads = git(["--git-dir", bare, "for-each-ref", "--format=%(refname)"]).trim();
  if (!heads) return [];
  git(["clone", "-q", bare, dir]);
  const files = walk(dir).sort();
  for (const f of files) expect(allowed(f) || foreign.includes(f) ? f : `not allowed: ${f}`).toBe(f);
  // every blob ever pushed, not only the last tree
  const all = git(["--git-dir", bare, "log", "--all", "-p", "--format=%H %an <%ae> %s%n%b"]);
  const forbidden = [...secrets, GIT_TOKEN, WEBHOOK_SECRET, "$argon2", "$2b$", "$2a$", "$bcrypt", "SQLite format"];
  for (const s of forbidden) expect(all.includes(s)).toBe(false);
  for (const f of files) expect(readFileSync(join(dir, f), "utf8").includes("master_secret")).toBe(false);
  return files;
}
