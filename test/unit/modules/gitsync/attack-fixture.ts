/**
 * What the attack tests share: packs written by hand (any header, any count, any zlib stream, deltas of any shape),
 * objects written straight into a git directory (trees with any names and modes), and a probe of how long the event
 * loop left an HTTP request waiting while some work ran (the reverse proxy shares the loop with git sync).
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import zlib from "node:zlib";
import { deadline } from "../../../../src/modules/gitsync/repo/limits";
import { writeLoose } from "../../../../src/modules/gitsync/repo/objects";
import { tempDir } from "../../../helpers/tmp";

/** A pack entry's type and size header, as git writes it. */
export function entryHead(type: number, size: number): Buffer {
  const out: number[] = [];
  let c = (type << 4) | (size & 15);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    out.push(c | 0x80);
    c = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  out.push(c);
  return Buffer.from(out);
}

/** An ofs-delta's offset back to its base, as git writes it. */
export function ofsBytes(ofs: number): Buffer {
  const b = [ofs & 0x7f];
  let n = ofs;
  while (n >> 7) {
    n = (n >> 7) - 1;
    b.unshift(0x80 | (n & 0x7f));
  }
  return Buffer.from(b);
}

/** A delta's size varint. */
export function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  do {
    let c = v & 0x7f;
    v = Math.floor(v / 128);
    if (v) c |= 0x80;
    out.push(c);
  } while (v);
  return Buffer.from(out);
}

/** One entry of a hand-made pack: `size` (default: the data's) and `raw` (default: the data deflated) may lie. */
export interface Entry {
  type: number;
  data: Uint8Array;
  size?: number;
  /** ofs-delta: bytes back from this entry's start. */
  ofs?: number;
  /** ref-delta: the base's id. */
  baseOid?: string;
  /** The compressed bytes as written (any stream, or garbage). */
  raw?: Uint8Array;
}

/** A pack of `entries` (the header's count may lie); where each entry starts. */
export function makePack(entries: Entry[], o: { count?: number; trailer?: "bad" } = {}): { bytes: Buffer; starts: number[] } {
  const head = Buffer.alloc(12);
  head.write("PACK", 0, "latin1");
  head.writeUInt32BE(2, 4);
  head.writeUInt32BE((o.count ?? entries.length) >>> 0, 8);
  const parts: Buffer[] = [head];
  const starts: number[] = [];
  let pos = 12;
  for (const e of entries) {
    starts.push(pos);
    const extra = e.type === 6 ? ofsBytes(e.ofs!) : e.type === 7 ? Buffer.from(e.baseOid!, "hex") : Buffer.alloc(0);
    const z = Buffer.from(e.raw ?? zlib.deflateSync(e.data));
    const h = entryHead(e.type, e.size ?? e.data.length);
    parts.push(h, extra, z);
    pos += h.length + extra.length + z.length;
  }
  const body = Buffer.concat(parts);
  const sum = new Bun.CryptoHasher("sha1").update(body).digest();
  if (o.trailer === "bad") sum[0] ^= 1;
  return { bytes: Buffer.concat([body, sum]), starts };
}

/** Bytes of a delta: base and result sizes, then instructions. */
export function delta(baseSize: number, resultSize: number, ...ops: Uint8Array[]): Buffer {
  return Buffer.concat([varint(baseSize), varint(resultSize), ...ops]);
}

/** A delta copy instruction (offset and length of the base, each up to 16 bits here). */
export function copyOp(off: number, len: number): Buffer {
  return Buffer.from([0x80 | 0x01 | 0x02 | 0x10 | 0x20, off & 0xff, (off >> 8) & 0xff, len & 0xff, (len >> 8) & 0xff]);
}

/** A delta insert instruction. */
export function insertOp(bytes: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([bytes.length]), bytes]);
}

/** The id git gives `content` as an object of `type`. */
export function oidOf(type: string, content: Uint8Array): string {
  return new Bun.CryptoHasher("sha1").update(`${type} ${content.length}\0`).update(content).digest("hex");
}

/** An empty bare git directory. */
export function bareDir(): string {
  const dir = tempDir("sundeck-attack-");
  execFileSync("git", ["init", "-q", "--bare", dir]);
  return dir;
}

/** `bytes` written to a pack file in a fresh git directory: the file and the directory. */
export function packFile(bytes: Uint8Array): { path: string; gitdir: string } {
  const gitdir = bareDir();
  const path = join(gitdir, "in.pack");
  writeFileSync(path, bytes);
  return { path, gitdir };
}

/** A deadline that throws `timed out <what>`. */
export const within = (ms = 30_000) => deadline(ms, (what) => new Error(`timed out ${what}`));

/** One raw tree entry. */
export interface TreeEntry {
  mode: string;
  name: string | Uint8Array;
  oid: string;
}

/** Write objects as a hostile pusher makes them: raw trees with any names, commits with any headers. */
export function objectWriter(gitdir: string) {
  return {
    blob: (content: string | Uint8Array) => writeLoose(gitdir, "blob", Buffer.from(content)),
    tree: (entries: TreeEntry[]) =>
      writeLoose(
        gitdir,
        "tree",
        Buffer.concat(
          entries.map((e) =>
            Buffer.concat([Buffer.from(`${e.mode} `), Buffer.from(e.name), Buffer.from([0]), Buffer.from(e.oid, "hex")]),
          ),
        ),
      ),
    commit: (tree: string, parents: string[] = [], time = 1_700_000_000) =>
      writeLoose(
        gitdir,
        "commit",
        Buffer.from(
          `tree ${tree}\n${parents.map((p) => `parent ${p}\n`).join("")}author a <a@x> ${time} +0000\ncommitter a <a@x> ${time} +0000\n\nm\n`,
        ),
      ),
    raw: (type: "commit" | "tree" | "blob", bytes: Uint8Array) => writeLoose(gitdir, type, bytes),
  };
}

/** Resident memory of this process, MiB. */
export const rssMiB = () => process.memoryUsage().rss / 1024 / 1024;

/**
 * Run `work` while an HTTP server in this process is asked every 20 ms from another process: what it returned, how
 * long it took, and the longest any request waited (the event loop held by synchronous work shows there).
 */
export async function ioStall<T>(work: () => Promise<T>): Promise<{ result: T; ms: number; stallMs: number }> {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("ok") });
  const url = `http://127.0.0.1:${server.port}/`;
  const child = Bun.spawn(
    ["bash", "-c", `while :; do curl -s -o /dev/null -w '%{time_total}\\n' ${url} || break; sleep 0.02; done`],
    { stdout: "pipe", stderr: "ignore" },
  );
  try {
    await Bun.sleep(150);
    const t0 = Date.now();
    const result = await work();
    const ms = Date.now() - t0;
    await Bun.sleep(100);
    child.kill();
    const times = (await new Response(child.stdout).text())
      .split("\n")
      .filter(Boolean)
      .map((t) => Number(t) * 1000);
    return { result, ms, stallMs: Math.max(0, ...times) };
  } finally {
    child.kill();
    await server.stop(true);
  }
}
