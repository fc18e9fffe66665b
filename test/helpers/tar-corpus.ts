/**
 * Builds tar archives byte by byte for the hostile corpus: ustar, GNU and v7 headers with any field, pax `x`/`g`
 * records, GNU long names and links, broken checksums and truncations, and gzip bombs streamed from one repeated
 * deflate segment (10 GiB of zeros costs ~10 MiB of gzip and no memory to make).
 */
import zlib from "node:zlib";

const BLOCK = 512;
const enc = new TextEncoder();

/** Fields of one header; anything left out gets the value a well-behaved tar writes. */
export interface HeaderSpec {
  name: string | Uint8Array;
  type?: string;
  size?: number;
  /** Raw 12 bytes for the size field (overrides `size`). */
  sizeField?: Uint8Array;
  linkname?: string;
  prefix?: string | Uint8Array;
  mode?: number;
  format?: "ustar" | "gnu" | "v7";
  /** Corrupt the checksum. */
  badChecksum?: boolean;
}

const octal = (n: number, width: number) => `${n.toString(8).padStart(width - 1, "0")}\0`;
const bytesOf = (s: string | Uint8Array) => (typeof s === "string" ? enc.encode(s) : s);

/** One 512-byte header block. */
export function header(spec: HeaderSpec): Uint8Array {
  const b = new Uint8Array(BLOCK);
  const put = (at: number, s: string | Uint8Array, max: number) => b.set(bytesOf(s).subarray(0, max), at);
  put(0, spec.name, 100);
  put(100, octal(spec.mode ?? (spec.type === "5" ? 0o755 : 0o644), 8), 8);
  put(108, octal(1000, 8), 8);
  put(116, octal(1000, 8), 8);
  if (spec.sizeField) b.set(spec.sizeField, 124);
  else put(124, octal(spec.size ?? 0, 12), 12);
  put(136, octal(1_700_000_000, 12), 12);
  b[156] = (spec.type ?? "0").charCodeAt(0);
  put(157, spec.linkname ?? "", 100);
  const format = spec.format ?? "ustar";
  if (format === "ustar") {
    put(257, "ustar\u000000", 8);
    put(345, spec.prefix ?? "", 155);
  } else if (format === "gnu") put(257, "ustar  \0", 8);
  put(265, "user", 32);
  put(297, "user", 32);
  b.fill(0x20, 148, 156);
  let sum = 0;
  for (const v of b) sum += v;
  if (spec.badChecksum) sum += 1;
  put(148, `${sum.toString(8).padStart(6, "0")}\0 `, 8);
  return b;
}

/** Data padded to whole blocks. */
export function padded(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.ceil(data.length / BLOCK) * BLOCK);
  out.set(data);
  return out;
}

/** A header and its data. */
export function member(spec: HeaderSpec, data: string | Uint8Array = new Uint8Array(0)): Uint8Array {
  const d = bytesOf(data);
  return concat(header({ ...spec, size: spec.size ?? d.length }), padded(d));
}

/** A pax `x` (or `g`) record set: one record per key, the length computed the way POSIX defines it. */
export function pax(records: Record<string, string | Uint8Array>, type: "x" | "g" = "x"): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const [k, v] of Object.entries(records)) {
    const body = concat(enc.encode(` ${k}=`), bytesOf(v), enc.encode("\n"));
    let len = body.length + 1;
    while (String(len).length + body.length !== len) len = String(len).length + body.length;
    parts.push(concat(enc.encode(String(len)), body));
  }
  return member({ name: "PaxHeaders/x", type }, concat(...parts));
}

/** A raw pax record set (for malformed records). */
export function paxRaw(data: string | Uint8Array): Uint8Array {
  return member({ name: "PaxHeaders/x", type: "x" }, data);
}

/** A GNU long name (`L`) or long link (`K`) record; the name gets its terminating NUL. */
export function gnuLong(name: string | Uint8Array, type: "L" | "K" = "L"): Uint8Array {
  return member({ name: "././@LongLink", type, format: "gnu" }, concat(bytesOf(name), new Uint8Array(1)));
}

/** Two zero blocks. */
export const END = new Uint8Array(2 * BLOCK);

/** A whole archive: the parts and the end-of-archive marker. */
export function tar(...parts: Uint8Array[]): Uint8Array {
  return concat(...parts, END);
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A byte array as a stream, in chunks of `chunk` bytes (odd sizes exercise the reader's joins). */
export function streamOf(bytes: Uint8Array, chunk = 4096): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.length) return c.close();
      c.enqueue(bytes.slice(at, at + chunk));
      at += chunk;
    },
  });
}

export const gzip = (b: Uint8Array) => new Uint8Array(zlib.gzipSync(b));

const GZIP_HEADER = new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);
const MiB = 1024 * 1024;

/**
 * A tar.gz of `entries` files of `entrySize` zero bytes each (a multiple of 1 MiB), streamed: each MiB of zeros is
 * the same self-contained deflate segment (full flush), so nothing is compressed per MiB and nothing is held. With
 * `trailer`, the gzip trailer (CRC of all the data) is computed too, for bombs small enough to read to the end.
 */
export function zeroBomb(entries: number, entrySize: number, opts: { trailer?: boolean } = {}): ReadableStream<Uint8Array> {
  const full = { finishFlush: zlib.constants.Z_FULL_FLUSH };
  const zeros = new Uint8Array(MiB);
  const zeroSeg = new Uint8Array(zlib.deflateRawSync(zeros, full));
  const perMiB = 16;
  const run = concat(...Array.from({ length: perMiB }, () => zeroSeg));
  let crc = 0;
  let isize = 0;
  const seg = (plain: Uint8Array) => {
    if (opts.trailer) crc = zlib.crc32(plain, crc);
    isize = (isize + plain.length) >>> 0;
    return new Uint8Array(zlib.deflateRawSync(plain, full));
  };
  const mibs = entrySize / MiB;
  let entry = 0;
  let left = 0;
  let stage: "start" | "entry" | "data" | "end" | "done" = "start";
  return new ReadableStream({
    pull(c) {
      if (stage === "start") {
        c.enqueue(GZIP_HEADER);
        stage = entries > 0 ? "entry" : "end";
      } else if (stage === "entry") {
        c.enqueue(seg(header({ name: `zeros-${entry}.bin`, size: entrySize })));
        left = mibs;
        stage = "data";
      } else if (stage === "data") {
        const n = Math.min(perMiB, left);
        if (opts.trailer) for (let i = 0; i < n; i++) crc = zlib.crc32(zeros, crc);
        isize = (isize + n * MiB) >>> 0;
        c.enqueue(n === perMiB ? run : run.subarray(0, n * zeroSeg.length));
        left -= n;
        if (left === 0) stage = ++entry < entries ? "entry" : "end";
      } else if (stage === "end") {
        const end = seg(END);
        const last = new Uint8Array(zlib.deflateRawSync(new Uint8Array(0)));
        const trailer = new Uint8Array(8);
        new DataView(trailer.buffer).setUint32(0, crc >>> 0, true);
        new DataView(trailer.buffer).setUint32(4, isize, true);
        c.enqueue(concat(end, last, trailer));
        stage = "done";
      } else c.close();
    },
  });
}
