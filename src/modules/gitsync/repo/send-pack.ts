/**
 * The client half of git's receive-pack protocol over smart HTTP: our own push, because the library's walks the
 * remote's trees with its parser (a hostile `..` entry throws) and stops only at the exact commits the remote
 * advertises (so it walks into history the remote already has). Here the commits sent are exactly those of ours the
 * remote's tip does not reach, read within the limits, and their objects minus what the boundary commits' trees
 * already hold; every commit we make has a tree our policy built, so nothing of a hostile tree is ever sent back.
 */
import zlib from "node:zlib";
import { GitSyncError, nonFastForward } from "./errors";
import type { Deadline, GitLimits } from "./limits";
import { type ObjectType, readBounded } from "./objects";
import { FLUSH, PktReader, pkt, pktText, shownText } from "./pkt-line";
import { readCommitInfo } from "./tree-walk";

const ZERO = "0".repeat(40);
/** Objects read between two turns of the event loop (the reverse proxy shares it; a read does not yield). */
const YIELD_EVERY = 256;
const yieldLoop = () => new Promise<void>((r) => setImmediate(r));
const PACK_TYPE: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };

/** Every commit `tip`'s history holds (within the limits: a missing or malformed one ends its line). */
export async function ancestors(gitdir: string, tip: string | null, limits: GitLimits, deadline: Deadline): Promise<Set<string>> {
  const out = new Set<string>();
  for (const queue = tip ? [tip] : []; queue.length; ) {
    deadline.check("reading the history");
    const oid = queue.pop()!;
    if (out.has(oid) || out.size > limits.maxObjects) continue;
    out.add(oid);
    if (out.size % YIELD_EVERY === 0) await yieldLoop();
    for (const p of (await readCommitInfo(gitdir, oid, limits))?.parents ?? []) queue.push(p);
  }
  return out;
}

/** The ids of a tree and everything below it, each object once (a tree bomb costs its objects, not its paths). */
async function reachable(gitdir: string, tree: string, limits: GitLimits, into: Set<string>, deadline: Deadline) {
  const stack = [tree];
  for (let n = 1; stack.length; n++) {
    deadline.check("listing objects");
    const oid = stack.pop()!;
    if (into.has(oid) || into.size > limits.maxObjects) continue;
    into.add(oid);
    if (n % YIELD_EVERY === 0) await yieldLoop();
    const found = await readBounded(gitdir, oid, limits.maxObjectBytes);
    if (found.kind !== "ok" || found.type !== "tree") continue;
    for (const e of treeEntries(found.content)) {
      if (e.mode === "160000") continue; // a submodule's commit is not ours to send
      if (e.mode === "40000" || e.mode === "040000") stack.push(e.oid);
      else into.add(e.oid);
    }
  }
}

function treeEntries(b: Uint8Array): Array<{ mode: string; oid: string }> {
  const out: Array<{ mode: string; oid: string }> = [];
  let i = 0;
  while (i < b.length) {
    const sp = b.indexOf(0x20, i);
    const nul = sp < 0 ? -1 : b.indexOf(0, sp + 1);
    if (sp < 0 || nul < 0 || nul + 21 > b.length) break;
    out.push({
      mode: Buffer.from(b.subarray(i, sp)).toString("latin1"),
      oid: Buffer.from(b.subarray(nul + 1, nul + 21)).toString("hex"),
    });
    i = nul + 21;
  }
  return out;
}

/**
 * The objects a push of `local` must send to a remote at `remote`: our commits the remote's history lacks, and the
 * objects of their trees not already in the trees of the commits they build on. Refused (non-fast-forward) when
 * `remote` is not in `local`'s history.
 */
export async function objectsToSend(gitdir: string, local: string, remote: string | null, limits: GitLimits, deadline: Deadline) {
  const theirs = await ancestors(gitdir, remote, limits, deadline);
  const ours = await ancestors(gitdir, local, limits, deadline);
  if (remote && !ours.has(remote)) throw nonFastForward("the remote's tip is not in the local history");
  const commits = [...ours].filter((c) => !theirs.has(c));
  const have = new Set<string>();
  const send = new Set<string>();
  for (const c of commits)
    for (const p of (await readCommitInfo(gitdir, c, limits))?.parents ?? [])
      if (theirs.has(p)) {
        const info = await readCommitInfo(gitdir, p, limits);
        if (info) await reachable(gitdir, info.tree, limits, have, deadline);
      }
  for (const c of commits) {
    const info = await readCommitInfo(gitdir, c, limits);
    if (!info) throw new GitSyncError("failed", `commit ${c.slice(0, 12)} of the local history cannot be read`);
    send.add(c);
    const tree = new Set<string>();
    await reachable(gitdir, info.tree, limits, tree, deadline);
    for (const o of tree) if (!have.has(o)) send.add(o);
  }
  return [...send];
}

/** A pack of whole (undeltified) objects; what a config repository pushes is small. */
export async function buildPack(gitdir: string, oids: string[], limits: GitLimits): Promise<Uint8Array> {
  const head = Buffer.alloc(12);
  head.write("PACK", 0, "latin1");
  head.writeUInt32BE(2, 4);
  head.writeUInt32BE(oids.length, 8);
  const parts: Uint8Array[] = [head];
  for (const oid of oids) {
    const found = await readBounded(gitdir, oid, Math.max(limits.maxBlobBytes, limits.maxObjectBytes));
    if (found.kind !== "ok")
      throw new GitSyncError("failed", `object ${oid.slice(0, 12)} to push cannot be read (${found.kind})`);
    parts.push(entryHeader(PACK_TYPE[found.type], found.content.length), zlib.deflateSync(found.content));
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([body, new Bun.CryptoHasher("sha1").update(body).digest()]);
}

function entryHeader(type: number, size: number): Uint8Array {
  const out: number[] = [];
  let c = (type << 4) | (size & 15);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    out.push(c | 0x80);
    c = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  out.push(c);
  return Uint8Array.from(out);
}

/** The request updating `ref` from `oldOid` to `newOid`, with the pack. */
export function pushRequest(ref: string, oldOid: string | null, newOid: string, pack: Uint8Array, caps: Set<string>): Uint8Array {
  const want = ["report-status", ...(caps.has("side-band-64k") ? ["side-band-64k"] : []), "agent=sundeck"];
  return Buffer.concat([pkt(`${oldOid ?? ZERO} ${newOid} ${ref}\0${want.join(" ")}\n`), FLUSH, pack]);
}

/** Read receive-pack's report; throws unless the pack unpacked and `ref` was updated. */
export async function readReport(r: PktReader, ref: string, where: string, sideband: boolean): Promise<void> {
  let lines: string[] = [];
  if (sideband) {
    const data: Uint8Array[] = [];
    for (;;) {
      const p = await r.next();
      if (p === undefined || p === null) break;
      if (p[0] === 1) data.push(p.subarray(1));
      else if (p[0] === 3)
        throw new GitSyncError(
          "failed",
          `the remote ${where} said: ${shownText(new TextDecoder().decode(p.subarray(1, 200)).trim())}`,
        );
    }
    const whole = Buffer.concat(data);
    const inner = new PktReader(
      (async function* () {
        yield whole;
      })(),
      where,
    );
    for (let p = await inner.next(); p !== undefined; p = await inner.next()) if (p) lines.push(pktText(p));
  } else {
    for (let p = await r.next(); p !== undefined && p !== null; p = await r.next()) lines.push(pktText(p));
  }
  lines = lines.filter(Boolean);
  const unpack = lines.find((l) => l.startsWith("unpack "));
  if (unpack !== "unpack ok")
    throw new GitSyncError("failed", `the remote ${where} could not store the push (${shownText(unpack ?? "no report", 120)})`);
  const status = lines.find((l) => l === `ok ${ref}` || l.startsWith(`ng ${ref} `));
  if (status === `ok ${ref}`) return;
  const why = status ? status.slice(`ng ${ref} `.length) : "no answer for the branch";
  if (/non-fast-forward|fetch first|stale/i.test(why)) throw nonFastForward(why);
  throw new GitSyncError("failed", `the remote ${where} refused the push (${shownText(why, 120)})`);
}
