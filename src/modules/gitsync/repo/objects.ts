/**
 * The object store, read with bounds: an object's type and size come from its header (a loose object's first
 * inflated bytes, a packed object's entry header), so an oversized object is never inflated; content is read only
 * when it is within the caller's limit. Loose objects are written here too (what a fetch stores). Packs present from
 * older fetches or a person's `git gc` are read through isomorphic-git once their header says the object is small.
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import zlib from "node:zlib";
import { gitFs, loadGit } from "./igit";

export type ObjectType = "commit" | "tree" | "blob" | "tag";

const TYPES = new Set<string>(["commit", "tree", "blob", "tag"]);
/** Compressed bytes inflated to read a header (a dynamic Huffman block header fits). */
const HEADER_INPUT = 1024;

/** What the store says of an object: absent, present with its header, or present and read. */
export type Found =
  | { kind: "missing" }
  | { kind: "too_big"; type: ObjectType; size: number }
  | { kind: "ok"; type: ObjectType; content: Uint8Array };

/** `<type> <size>\0<content>` hashed: the object's id. */
export function objectId(type: ObjectType, content: Uint8Array): string {
  return new Bun.CryptoHasher("sha1").update(`${type} ${content.length}\0`).update(content).digest("hex");
}

/** Store `content` as a loose object (temp file, then rename); its id. Never overwrites. */
export async function writeLoose(gitdir: string, type: ObjectType, content: Uint8Array): Promise<string> {
  const oid = objectId(type, content);
  const dir = join(gitdir, "objects", oid.slice(0, 2));
  const path = join(dir, oid.slice(2));
  if (existsSync(path)) return oid;
  const wrapped = Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]);
  const deflated = await new Promise<Buffer>((res, rej) => zlib.deflate(wrapped, (e, b) => (e ? rej(e) : res(b))));
  mkdirSync(dir, { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, deflated, { mode: 0o444 });
  renameSync(tmp, path);
  return oid;
}

/**
 * The header of a loose object's file (type and size), reading only its first compressed bytes: 32 of them, then more
 * up to HEADER_INPUT until the header is whole. The whole 1,024 at once inflated a 1 MiB run of one byte to 1 MB for a
 * header of a dozen (a pull that looked at 1,000 such files churned 1 GB, and the heap grew by 100 MiB).
 */
function looseHeader(file: Uint8Array): { type: ObjectType; size: number; at: number } | null {
  let head: Buffer = Buffer.alloc(0);
  for (let n = 32; ; n *= 2) {
    try {
      head = zlib.inflateSync(file.subarray(0, n), { finishFlush: zlib.constants.Z_SYNC_FLUSH });
    } catch {
      if (n >= HEADER_INPUT || n >= file.length) return null;
      continue;
    }
    if (head.indexOf(0) >= 0 || n >= HEADER_INPUT || n >= file.length) break;
  }
  const nul = head.indexOf(0);
  if (nul < 0 || nul > 32) return null;
  const m = /^(commit|tree|blob|tag) (\d{1,15})$/.exec(head.subarray(0, nul).toString("latin1"));
  return m ? { type: m[1] as ObjectType, size: Number(m[2]), at: nul + 1 } : null;
}

/** Read an object when it is at most `max` bytes; its header only when it is larger. */
export async function readBounded(gitdir: string, oid: string, max: number): Promise<Found> {
  if (!/^[0-9a-f]{40}$/.test(oid)) return { kind: "missing" };
  const loose = join(gitdir, "objects", oid.slice(0, 2), oid.slice(2));
  if (existsSync(loose)) {
    const file = readFileSync(loose);
    const h = looseHeader(file);
    if (!h) return { kind: "missing" };
    if (h.size > max) return { kind: "too_big", type: h.type, size: h.size };
    let all: Buffer;
    try {
      all = zlib.inflateSync(file, { maxOutputLength: h.at + h.size + 1 });
    } catch {
      return { kind: "missing" };
    }
    if (all.length !== h.at + h.size) return { kind: "missing" };
    return { kind: "ok", type: h.type, content: all.subarray(h.at) };
  }
  const packed = packedHeader(gitdir, oid);
  if (!packed) return { kind: "missing" };
  if (packed.size > max) return { kind: "too_big", type: packed.type, size: packed.size };
  const git = await loadGit();
  const r = await git.readObject({ fs: gitFs, gitdir, oid, format: "content" });
  const content = r.object as Uint8Array;
  if (content.length > max) return { kind: "too_big", type: packed.type, size: content.length };
  return { kind: "ok", type: r.type as ObjectType, content };
}

// ---- packs: the .idx v2 lookup and the entry header, enough to know a packed object's type and size

const PACK_TYPES: Record<number, ObjectType> = { 1: "commit", 2: "tree", 3: "blob", 4: "tag" };

/** A packed object's type and (for a delta, resulting) size, without inflating its data; null when not packed. */
function packedHeader(gitdir: string, oid: string): { type: ObjectType; size: number } | null {
  const dir = join(gitdir, "objects", "pack");
  if (!existsSync(dir)) return null;
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".idx")) continue;
    const offset = idxOffset(readFileSync(join(dir, name)), oid);
    if (offset === null) continue;
    const fd = openSync(join(dir, name.replace(/\.idx$/, ".pack")), "r");
    try {
      return entryHeader(fd, offset, 0);
    } finally {
      closeSync(fd);
    }
  }
  return null;
}

/** The pack offset of `oid` in an index (version 2), or null. */
function idxOffset(idx: Buffer, oid: string): number | null {
  if (idx.length < 8 + 1024 || idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2) return null;
  const want = Buffer.from(oid, "hex");
  const first = want[0]!;
  const lo0 = first === 0 ? 0 : idx.readUInt32BE(8 + (first - 1) * 4);
  const hi0 = idx.readUInt32BE(8 + first * 4);
  const n = idx.readUInt32BE(8 + 255 * 4);
  const names = 8 + 1024;
  let lo = lo0;
  let hi = hi0;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = Buffer.compare(idx.subarray(names + mid * 20, names + mid * 20 + 20), want);
    if (c === 0) {
      const small = idx.readUInt32BE(names + n * 24 + mid * 4);
      if (!(small & 0x80000000)) return small;
      const large = names + n * 28 + (small & 0x7fffffff) * 8;
      return Number(idx.readBigUInt64BE(large));
    }
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return null;
}

/** Type and size of the entry at `offset`; a delta's come from its base chain and its own header. */
function entryHeader(fd: number, offset: number, depth: number): { type: ObjectType; size: number } | null {
  if (depth > 64) return null;
  const head = Buffer.alloc(32);
  const got = readSync(fd, head, 0, 32, offset);
  const h = parseEntryHeader(head.subarray(0, got));
  if (!h) return null;
  if (h.type <= 4) return { type: PACK_TYPES[h.type]!, size: h.size };
  if (h.type !== 6) return null; // a ref-delta's base is found by id: not needed for packs written by git or us
  const base = entryHeader(fd, offset - h.ofs!, depth + 1);
  if (!base) return null;
  const data = Buffer.alloc(HEADER_INPUT);
  const n = readSync(fd, data, 0, HEADER_INPUT, offset + h.len);
  let delta: Buffer;
  try {
    delta = zlib.inflateSync(data.subarray(0, n), { finishFlush: zlib.constants.Z_SYNC_FLUSH });
  } catch {
    return null;
  }
  const sizes = deltaSizes(delta);
  return sizes ? { type: base.type, size: sizes.result } : null;
}

/** A pack entry's header: type, inflated size, the offset back to an ofs-delta's base, the header's length. */
export function parseEntryHeader(
  b: Uint8Array,
): { type: number; size: number; ofs?: number; baseOid?: string; len: number } | null {
  let i = 0;
  let c = b[i++];
  if (c === undefined) return null;
  const type = (c >> 4) & 7;
  let size = c & 15;
  let shift = 4;
  while (c & 0x80) {
    c = b[i++];
    if (c === undefined || shift > 46) return null;
    size += (c & 0x7f) * 2 ** shift;
    shift += 7;
  }
  if (type === 6) {
    c = b[i++];
    if (c === undefined) return null;
    let ofs = c & 0x7f;
    while (c & 0x80) {
      c = b[i++];
      if (c === undefined || ofs > 2 ** 45) return null;
      ofs = (ofs + 1) * 128 + (c & 0x7f);
    }
    return { type, size, ofs, len: i };
  }
  if (type === 7) {
    if (b.length < i + 20) return null;
    return { type, size, baseOid: Buffer.from(b.subarray(i, i + 20)).toString("hex"), len: i + 20 };
  }
  if (type === 0 || type === 5) return null;
  return { type, size, len: i };
}

/** The base and result sizes at the start of delta data. */
export function deltaSizes(d: Uint8Array): { base: number; result: number; at: number } | null {
  let i = 0;
  const varint = (): number | null => {
    let v = 0;
    let shift = 0;
    for (;;) {
      const c = d[i++];
      if (c === undefined || shift > 49) return null;
      v += (c & 0x7f) * 2 ** shift;
      shift += 7;
      if (!(c & 0x80)) return v;
    }
  };
  const base = varint();
  const result = base === null ? null : varint();
  return base === null || result === null ? null : { base, result, at: i };
}

/** Whether `t` names an object type. */
export const isObjectType = (t: string): t is ObjectType => TYPES.has(t);
