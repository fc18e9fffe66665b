/**
 * Fetching one branch, bounded: ask for the remote branch's tip with what we have, receive the pack to a file (capped,
 * checksummed), walk it into loose objects with every object bounded by its header, then move the tracking ref. The
 * same for HTTP(S) and SSH: each gives an upload-pack connection, nothing else.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { gitFs as fs, loadGit } from "./igit";
import type { Deadline, GitLimits } from "./limits";
import { readBounded } from "./objects";
import { ingestPack, type SkippedObject } from "./pack-ingest";
import type { PktReader } from "./pkt-line";
import type { RemoteRef } from "./transport";
import { readCommitInfo } from "./tree-walk";
import { type Advertisement, MAX_HAVES, receivePack, wantRequest } from "./upload-pack";

/** One upload-pack exchange with the remote: its advertisement, then one request and the answer to read. */
export interface UploadPackConnection {
  /** The refs, keeping `want` among them however many the remote lists. */
  advertisement(want?: string): Promise<Advertisement>;
  request(body: Uint8Array): Promise<PktReader>;
  /** End the exchange (after the answer, or instead of a request). */
  close(): void;
}

/** What a fetch brought. */
export interface Fetched {
  /** The remote branch's tip, or null when the remote has no such branch. */
  tip: string | null;
  /** Objects the pack walk did not store (over a limit, or a delta on one). */
  skipped: SkippedObject[];
}

/** The branches and tags an advertisement lists (HEAD and peeled tags left out). */
export function listed(adv: Advertisement): RemoteRef[] {
  return adv.refs.filter((r) => r.ref !== "HEAD" && !r.ref.endsWith("^{}"));
}

/** What a fetch of `branch` needs besides its connection. */
interface FetchOptions {
  gitdir: string;
  branch: string;
  limits: GitLimits;
  deadline: Deadline;
  where: string;
}

/**
 * Fetch `refs/heads/<branch>` into `refs/remotes/origin/<branch>`, telling the remote what the local and tracking
 * branches hold; the tip and what was skipped.
 */
export async function fetchBranch(conn: UploadPackConnection, f: FetchOptions): Promise<Fetched> {
  const tracking = `refs/remotes/origin/${f.branch}`;
  const o = { ...f, tracking, haveFrom: [`refs/heads/${f.branch}`, tracking] };
  const git = await loadGit();
  let skipped: SkippedObject[] = [];
  let tip: string | null;
  try {
    const adv = await conn.advertisement(`refs/heads/${o.branch}`);
    tip = adv.refs.find((r) => r.ref === `refs/heads/${o.branch}`)?.oid ?? null;
    if (tip && (await readBounded(o.gitdir, tip, o.limits.maxObjectBytes)).kind !== "ok") {
      const haves = await recentCommits(o.gitdir, o.haveFrom, o.limits);
      const reader = await conn.request(wantRequest(tip, haves, adv.caps, o.where));
      const path = join(o.gitdir, `sundeck-fetch-${process.pid}-${Date.now()}.pack`);
      await receivePack(reader, path, { where: o.where, maxBytes: o.limits.maxPackBytes, deadline: o.deadline });
      try {
        skipped = (await ingestPack(path, o.gitdir, o.limits, o.deadline)).skipped;
      } finally {
        rmSync(path, { force: true });
      }
    }
  } finally {
    conn.close();
  }
  if (!tip) {
    // the remote has no such branch (an empty remote): forget a tracking ref left from before
    await git.deleteRef({ fs, gitdir: o.gitdir, ref: o.tracking }).catch(() => {});
    return { tip: null, skipped };
  }
  // the tip's commit itself must be here (a pack without it, or with it over the limit, moves nothing)
  if (!(await readCommitInfo(o.gitdir, tip, o.limits)))
    return { tip: (await currentTracking(o.gitdir, o.tracking)) ?? null, skipped: [...skipped, tipSkipped(tip)] };
  await git.writeRef({ fs, gitdir: o.gitdir, ref: o.tracking, value: tip, force: true });
  return { tip, skipped };
}

function tipSkipped(tip: string): SkippedObject {
  return { oid: tip, type: "commit", size: 0, reason: "the remote branch's commit is missing, too big or malformed" };
}

async function currentTracking(gitdir: string, ref: string): Promise<string | null> {
  const git = await loadGit();
  return git.resolveRef({ fs, gitdir, ref }).catch(() => null);
}

/** The commits to announce as haves: each start and its ancestors, newest first, at most MAX_HAVES. */
async function recentCommits(gitdir: string, starts: string[], limits: GitLimits): Promise<string[]> {
  const git = await loadGit();
  const out: string[] = [];
  const seen = new Set<string>();
  const queue: string[] = [];
  for (const ref of starts) {
    const oid = await git.resolveRef({ fs, gitdir, ref }).catch(() => null);
    if (oid) queue.push(oid);
  }
  while (queue.length && out.length < MAX_HAVES) {
    const oid = queue.shift()!;
    if (seen.has(oid)) continue;
    seen.add(oid);
    const c = await readCommitInfo(gitdir, oid, limits);
    if (!c) continue;
    out.push(oid);
    queue.push(...c.parents);
  }
  return out;
}
