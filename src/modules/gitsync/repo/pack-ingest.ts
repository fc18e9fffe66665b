/**
 * A received pack, walked with bounds and stored as loose objects. Each entry's header says its type and size
 * before anything is inflated: a blob over `maxBlobBytes` (or another object over `maxObjectBytes`, or a delta whose
 * result would be) is skipped, its compressed bytes streamed through the inflater only to find where the next entry
 * starts (in small chunks, yielding, under the deadline), never held. What is kept is at most one object's size in
 * memory at a time. The skipped ids are recorded so a later tree walk can say why an entry is missing.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import zlib from "node:zlib";
import { GitSyncError } from "./errors";
import type { Deadline, GitLimits } from "./limits";
import { deltaSizes, type ObjectType, parseEntryHeader, readBounded, writeLoose } from "./objects";

const TYPE_NAMES: Record<number, ObjectType> = { 1: "commit", 2: "tree", 3: "blob", 4: "tag" };
/** Compressed bytes fed to the inflater at a time when streaming (a zlib stream expands at most ~1032:1). */
const CHUNK = 16 * 1024;
/** Output of a skipped entry discarded between two garbage collections. */
const COLLECT_EVERY = 32 * 1024 * 1024;
/** The skip record kept in the git directory: the newest ids only. */
const SKIP_FILE = "sundeck-skipped.json";
const SKIP_KEEP = 1000;

/** An object the walk did not store, and why. */
export interface SkippedObject {
  /** Known for a skipped blob (hashed as it streamed by); null for a delta whose result was never built. */
  oid: string | null;
  type: ObjectType | "delta";
  size: number;
  reason: string;
}

/** What a walk stored and skipped. */
export interface IngestResult {
  objects: number;
  stored: number;
  skipped: SkippedObject[];
}

type Resolved = { oid: string; type: ObjectType } | { skipped: true };
/** A delta met in the walk: where its data is, never the data itself (a pack may hold 100,000 of 4 MiB each). */
interface PendingDelta {
  offset: number;
  base: { offset: number } | { oid: string };
  /** Where its zlib data starts, and the size its header gives. */
  at: number;
  size: number;
}

const malformed = (why: string) => new GitSyncError("failed", `the remote sent a malformed pack (${why}): nothing was applied`);

/** Walk the pack at `path` into `gitdir`'s object store within `limits`. */
export async function ingestPack(path: string, gitdir: string, limits: GitLimits, deadline: Deadline): Promise<IngestResult> {
  const fd = openSync(path, "r");
  try {
    return await walk(fd, fstatSync(fd).size, gitdir, limits, deadline);
  } finally {
    closeSync(fd);
  }
}

async function walk(fd: number, fileSize: number, gitdir: string, limits: GitLimits, deadline: Deadline) {
  const readAt = (pos: number, len: number) => {
    const b = Buffer.alloc(Math.max(0, Math.min(len, fileSize - 20 - pos)));
    const n = b.length ? readSync(fd, b, 0, b.length, pos) : 0;
    return b.subarray(0, n);
  };
  const head = readAt(0, 12);
  if (head.length < 12 || head.toString("latin1", 0, 4) !== "PACK") throw malformed("no PACK header");
  const version = head.readUInt32BE(4);
  if (version !== 2 && version !== 3) throw malformed(`version ${version}`);
  const count = head.readUInt32BE(8);
  if (count > limits.maxObjects)
    throw new GitSyncError(
      "failed",
      `the remote sent ${count} objects, more than git_sync.max_objects (${limits.maxObjects}): nothing was applied`,
    );

  const byOffset = new Map<number, Resolved>();
  const byOid = new Map<string, ObjectType>();
  const skipped: SkippedObject[] = [];
  const pending: PendingDelta[] = [];
  let stored = 0;
  // what each object costs (inflated, wrapped, deflated) is garbage once it is stored: a full collection every 32 MiB
  // of it, since a lazy one let a 400 KiB pack of a hundred 4 MiB trees leave 800 MiB resident (550 with Bun.gc(false))
  let churn = 0;
  const spent = (n: number) => {
    churn += n;
    if (churn < COLLECT_EVERY) return;
    churn = 0;
    Bun.gc(true);
  };
  const capOf = (type: ObjectType) => (type === "blob" ? limits.maxBlobBytes : limits.maxObjectBytes);
  const store = async (offset: number, type: ObjectType, content: Uint8Array) => {
    const oid = await writeLoose(gitdir, type, content);
    byOffset.set(offset, { oid, type });
    byOid.set(oid, type);
    stored++;
    return oid;
  };
  const skip = (offset: number, s: SkippedObject) => {
    byOffset.set(offset, { skipped: true });
    skipped.push(s);
  };

  let pos = 12;
  for (let i = 0; i < count; i++) {
    deadline.check("reading the pack");
    if (i % 64 === 63) await yieldLoop();
    const start = pos;
    const h = parseEntryHeader(readAt(pos, 64));
    if (!h) throw malformed(`entry ${i} has no valid header`);
    pos += h.len;
    const base = h.type === 6 ? start - h.ofs! : null;
    if (base !== null && (base < 12 || base >= start)) throw malformed(`entry ${i} points outside the pack`);
    const type = TYPE_NAMES[h.type];
    // a delta's instructions are at most about the size of its result
    const cap = type ? capOf(type) : limits.maxObjectBytes + 1024;
    if (h.size > cap) {
      const hasher = type === "blob" ? new Bun.CryptoHasher("sha1").update(`blob ${h.size}\0`) : null;
      const r = await inflateStream(readAt, pos, fileSize - 20, { keep: 0, onData: (d) => hasher?.update(d), deadline });
      if (r.total !== h.size) throw malformed(`entry ${i} is not the size its header says`);
      pos += r.consumed;
      skip(start, {
        oid: hasher ? hasher.digest("hex") : null,
        type: type ?? "delta",
        size: h.size,
        reason: `${size(h.size)}, over the ${size(cap)} limit`,
      });
      continue;
    }
    const { data, consumed } = await inflateBounded(readAt, pos, fileSize - 20, h.size, deadline);
    spent(3 * data.length);
    if (type) await store(start, type, data);
    // a delta is inflated again when its base is known: held until then, 100,000 of them would be 400 GiB
    else pending.push({ offset: start, base: base !== null ? { offset: base } : { oid: h.baseOid! }, at: pos, size: h.size });
    pos += consumed;
  }
  if (pos !== fileSize - 20) throw malformed("bytes after the last entry");

  // deltas: each resolved once its base is (an ofs-delta's base comes first; a ref-delta's may come later, or be
  // ours). One waiting for a base of this pack is looked at again only when that base is resolved, so a chain sent
  // newest first costs its length, not its length squared.
  const waiting = new Map<number | string, PendingDelta[]>();
  const wake = (key: number | string) => {
    const w = waiting.get(key);
    if (w) ready.push(...w.reverse());
    waiting.delete(key);
  };
  const ready = pending.reverse();
  for (let n = 0; ready.length; n++) {
    deadline.check("resolving deltas");
    if (n % 64 === 63) await yieldLoop();
    const d = ready.pop()!;
    const b = await baseOf(d, byOffset, byOid, gitdir, limits);
    if (b === "wait") {
      const key = "offset" in d.base ? d.base.offset : d.base.oid;
      const list = waiting.get(key);
      if (list) list.push(d);
      else waiting.set(key, [d]);
      continue;
    }
    if (b === "skipped") {
      skip(d.offset, { oid: null, type: "delta", size: d.size, reason: "its delta base was skipped or is missing" });
      wake(d.offset);
      continue;
    }
    const { data } = await inflateBounded(readAt, d.at, fileSize - 20, d.size, deadline);
    spent(data.length + b.content.length);
    const sizes = deltaSizes(data);
    if (!sizes || sizes.base !== b.content.length) throw malformed("a delta does not fit its base");
    if (sizes.result > capOf(b.type)) {
      skip(d.offset, {
        oid: null,
        type: b.type,
        size: sizes.result,
        reason: `${size(sizes.result)}, over the ${size(capOf(b.type))} limit`,
      });
      wake(d.offset);
      continue;
    }
    spent(3 * sizes.result);
    const oid = await store(d.offset, b.type, applyDelta(b.content, data, sizes));
    wake(d.offset);
    wake(oid);
  }
  for (const d of [...waiting.values()].flat().sort((a, b) => a.offset - b.offset))
    skip(d.offset, { oid: null, type: "delta", size: d.size, reason: "its delta base is not in the pack" });
  recordSkipped(gitdir, skipped);
  return { objects: count, stored, skipped };
}

/** A delta's base content: known, still to come, or lost (skipped, missing, or too big to read). */
async function baseOf(
  d: PendingDelta,
  byOffset: Map<number, Resolved>,
  byOid: Map<string, ObjectType>,
  gitdir: string,
  limits: GitLimits,
): Promise<{ type: ObjectType; content: Uint8Array } | "wait" | "skipped"> {
  let oid: string;
  if ("offset" in d.base) {
    const r = byOffset.get(d.base.offset);
    if (!r) return "wait";
    if ("skipped" in r) return "skipped";
    oid = r.oid;
  } else oid = d.base.oid;
  // a ref-delta's base may still be a pending delta of this pack, or be one of ours already
  const found = await readBounded(gitdir, oid, Math.max(limits.maxBlobBytes, limits.maxObjectBytes));
  if (found.kind === "missing") return byOid.has(oid) ? "skipped" : "wait";
  return found.kind === "ok" ? { type: found.type, content: found.content } : "skipped";
}

/** Build a delta's result from its base; every copy is checked against the base's bounds. */
export function applyDelta(base: Uint8Array, delta: Uint8Array, sizes: { result: number; at: number }): Uint8Array {
  const out = new Uint8Array(sizes.result);
  let o = 0;
  let i = sizes.at;
  while (i < delta.length) {
    const op = delta[i++]!;
    if (op & 0x80) {
      let off = 0;
      let len = 0;
      for (let b = 0; b < 4; b++) if (op & (1 << b)) off += delta[i++]! * 2 ** (8 * b);
      for (let b = 0; b < 3; b++) if (op & (0x10 << b)) len += delta[i++]! * 2 ** (8 * b);
      if (len === 0) len = 0x10000;
      if (off + len > base.length || o + len > out.length) throw malformed("a delta copies outside its base");
      out.set(base.subarray(off, off + len), o);
      o += len;
    } else if (op > 0) {
      if (i + op > delta.length || o + op > out.length) throw malformed("a delta inserts past its end");
      out.set(delta.subarray(i, i + op), o);
      o += op;
      i += op;
    } else throw malformed("a delta has a reserved instruction");
  }
  if (o !== out.length) throw malformed("a delta does not build the size it says");
  return out;
}

type ReadAt = (pos: number, len: number) => Buffer;

/**
 * Inflate the entry at `pos`, expected `expect` bytes: at once from a window sized for ordinary compression, else
 * (a stream longer than that, which only a strange or hostile encoder makes) streamed, never past `expect` bytes.
 */
async function inflateBounded(readAt: ReadAt, pos: number, end: number, expect: number, deadline: Deadline) {
  const window = readAt(pos, expect + (expect >> 4) + 1024);
  try {
    const r = zlib.inflateSync(window, { info: true, maxOutputLength: Math.max(1, expect) } as zlib.ZlibOptions) as unknown as {
      buffer: Buffer;
      engine: { bytesWritten: number };
    };
    if (r.buffer.length !== expect) throw malformed("an entry is not the size its header says");
    return { data: r.buffer, consumed: r.engine.bytesWritten };
  } catch (e) {
    if (e instanceof GitSyncError) throw e;
    if (!/unexpected end|end of file|incomplete/i.test((e as Error).message)) throw malformed("an entry does not inflate");
  }
  const r = await inflateStream(readAt, pos, end, { keep: expect, deadline });
  if (r.total !== expect) throw malformed("an entry is not the size its header says");
  return { data: r.data, consumed: r.consumed };
}

/**
 * Stream the zlib data at `pos` through the inflater in small chunks, keeping at most `keep` bytes of output (more
 * fails), passing every output chunk to `onData`; how many compressed bytes it took and how many it produced.
 */
async function inflateStream(
  readAt: ReadAt,
  pos: number,
  end: number,
  o: { keep: number; onData?: (d: Buffer) => void; deadline: Deadline },
): Promise<{ consumed: number; total: number; data: Buffer }> {
  const inf = zlib.createInflate();
  const kept: Buffer[] = [];
  let total = 0;
  let ended = false;
  let failure: Error | null = null;
  let sinceCollect = 0;
  inf.on("data", (d: Buffer) => {
    total += d.length;
    o.onData?.(d);
    // what is not kept is garbage at once: collect it every 32 MiB rather than when a big heap's GC gets to it
    sinceCollect += d.length;
    if (o.keep === 0 && sinceCollect >= COLLECT_EVERY) {
      sinceCollect = 0;
      Bun.gc(false);
    }
    if (o.keep > 0) {
      if (total > o.keep) failure ??= malformed("an entry is larger than its header says");
      else kept.push(d);
    }
  });
  const finished = new Promise<void>((res) => {
    inf.once("end", () => {
      ended = true;
      res();
    });
    inf.once("error", (e) => {
      failure ??= malformed(`an entry does not inflate (${(e as Error).message})`);
      res();
    });
  });
  let p = pos;
  try {
    while (!ended && !failure && p < end) {
      o.deadline.check("reading the pack");
      const chunk = readAt(p, CHUNK);
      if (!chunk.length) break;
      p += chunk.length;
      await new Promise<void>((res) => inf.write(chunk, () => res()));
      await yieldLoop();
    }
    inf.end();
    await finished;
  } finally {
    if (!ended) inf.destroy();
  }
  if (failure) throw failure;
  if (!ended) throw malformed("an entry's data ends early");
  return { consumed: inf.bytesWritten, total, data: Buffer.concat(kept) };
}

/** Let the proxy and everything else on the event loop run. */
const yieldLoop = () => new Promise<void>((r) => setImmediate(r));

/** Keep the ids of skipped objects, newest last, so a tree walk can say why an entry is missing. */
function recordSkipped(gitdir: string, skipped: SkippedObject[]): void {
  const withId = skipped.filter((s) => s.oid);
  if (!withId.length) return;
  const all = { ...readSkipped(gitdir) };
  for (const s of withId) all[s.oid!] = s.reason;
  const keep = Object.entries(all).slice(-SKIP_KEEP);
  writeFileSync(join(gitdir, SKIP_FILE), JSON.stringify(Object.fromEntries(keep)), { mode: 0o600 });
}

/** Why objects were skipped by earlier fetches (id -> reason). */
export function readSkipped(gitdir: string): Record<string, string> {
  try {
    const v = JSON.parse(readFileSync(join(gitdir, SKIP_FILE), "utf8"));
    return v && typeof v === "object" ? v : {};
  } catch {
    return {};
  }
}

/** A size for people: bytes, KiB or MiB. */
export function size(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${Math.round(n / 102.4) / 10} KiB`;
  return `${Math.round(n / 104857.6) / 10} MiB`;
}
