/**
 * Just enough tar for the strategies, all streaming: read the entries of the Engine's archive streams (ustar, pax and
 * GNU long names, as Go's archive/tar writes them), write them back under other names (the volume strategy puts each
 * mount under its own top-level directory), and wrap one file of known size. Bodies pass through in chunks; only
 * headers (512 bytes) and pax records (capped) are held. Vetting a hostile archive is not done here: restores hand
 * these functions archives the archive checker already passed.
 */

const BLOCK = 512;
/** Cap of a pax or GNU long-name body: names and a few records, never data. */
const META_CAP = 1024 * 1024;

/** One entry as read: its resolved name and link name, type flag, body size, and the raw ustar header. */
export interface TarEntry {
  name: string;
  linkname: string;
  /** The ustar type flag: "0" file, "5" directory, "2" symlink, "1" hardlink, ... */
  type: string;
  size: number;
  /** Owner and mode as recorded. */
  uid: number;
  gid: number;
  mode: number;
  /** The ustar header block as read (other fields are copied from it when the entry is written again). */
  header: Uint8Array;
  /** pax records of this entry other than path, linkpath and size. */
  pax: Record<string, string>;
}

/** Reads exact byte counts from a stream. */
export class ByteReader {
  private buf: Uint8Array = new Uint8Array(0);
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private done = false;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.reader = stream.getReader();
  }

  /** `n` bytes, or null when the stream ended first (a short tail is dropped). */
  async exact(n: number): Promise<Uint8Array | null> {
    while (this.buf.length < n && !this.done) await this.fill();
    if (this.buf.length < n) return null;
    const out = this.buf.slice(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }

  /** The next `n` bytes as chunks, without holding them; throws when the stream ends early. */
  async *chunks(n: number): AsyncGenerator<Uint8Array> {
    let left = n;
    while (left > 0) {
      if (this.buf.length === 0) {
        if (this.done) throw new Error("tar stream ended inside an entry");
        await this.fill();
        continue;
      }
      const take = Math.min(left, this.buf.length);
      // a view, not a copy: the buffer is never written to, only replaced
      const out = this.buf.subarray(0, take);
      this.buf = this.buf.subarray(take);
      left -= take;
      yield out;
    }
  }

  async skip(n: number): Promise<void> {
    for await (const _ of this.chunks(n));
  }

  cancel(reason?: unknown): void {
    this.reader.cancel(reason).catch(() => {});
  }

  private async fill(): Promise<void> {
    const r = await this.reader.read();
    if (r.done) {
      this.done = true;
      return;
    }
    this.buf = this.buf.length ? concat(this.buf, r.value) : r.value;
  }
}

/**
 * Calls `onEntry` for each entry of a tar stream in order; the body must be consumed (or not: what is left is
 * skipped) before the next entry. Stops at the end-of-archive blocks.
 */
export async function readTar(
  stream: ReadableStream<Uint8Array>,
  onEntry: (e: TarEntry, body: AsyncIterable<Uint8Array>) => Promise<void>,
): Promise<void> {
  for await (const { entry, body } of tarEntries(stream)) await onEntry(entry, body);
}

/**
 * The entries of a tar stream in order, each with its body; what a consumer leaves of a body is skipped when it asks
 * for the next entry. Leaving the loop early cancels the stream.
 */
export async function* tarEntries(
  stream: ReadableStream<Uint8Array>,
): AsyncGenerator<{ entry: TarEntry; body: AsyncIterable<Uint8Array> }> {
  const r = new ByteReader(stream);
  let pax: Record<string, string> = {};
  let global: Record<string, string> = {};
  let longName: string | null = null;
  let longLink: string | null = null;
  let finished = false;
  try {
    for (;;) {
      const h = await r.exact(BLOCK);
      if (!h || h.every((b) => b === 0)) {
        finished = true;
        return;
      }
      const type = String.fromCharCode(h[156] || 48);
      const rawSize = numeric(h, 124, 12);
      if (type === "x" || type === "g" || type === "L" || type === "K") {
        if (rawSize > META_CAP) throw new Error(`tar metadata entry of ${rawSize} bytes is too large`);
        const body = (await r.exact(rawSize)) ?? new Uint8Array(0);
        await r.skip(padding(rawSize));
        if (type === "x") pax = { ...pax, ...parsePax(body) };
        else if (type === "g") global = { ...global, ...parsePax(body) };
        else if (type === "L") longName = cString(body, 0, body.length);
        else longLink = cString(body, 0, body.length);
        continue;
      }
      const recs = { ...global, ...pax };
      const size = recs.size !== undefined ? Number(recs.size) : rawSize;
      const ustar = cString(h, 257, 6) === "ustar";
      const prefix = ustar ? cString(h, 345, 155) : "";
      const short = cString(h, 0, 100);
      const name = recs.path ?? longName ?? (prefix ? `${prefix}/${short}` : short);
      const linkname = recs.linkpath ?? longLink ?? cString(h, 157, 100);
      const { path: _p, linkpath: _l, size: _s, ...rest } = recs;
      const entry: TarEntry = {
        name,
        linkname,
        type,
        size,
        uid: numeric(h, 108, 8),
        gid: numeric(h, 116, 8),
        mode: numeric(h, 100, 8),
        header: h,
        pax: rest,
      };
      pax = {};
      longName = null;
      longLink = null;
      const hasBody = type === "0" || type === "7" || type === "\0";
      let consumed = 0;
      const body = hasBody ? counted(r.chunks(size), (n) => (consumed += n)) : empty();
      yield { entry, body };
      // what the consumer left of the body is skipped, with the padding
      if (hasBody) await r.skip(size - consumed + padding(size));
    }
  } catch (e) {
    finished = true;
    r.cancel(e);
    throw e;
  } finally {
    if (!finished) r.cancel();
  }
}

/** The header block(s) of `e` under a new name and link name: a pax header first when a name needs one. */
export function entryHeader(e: TarEntry, name: string, linkname: string): Uint8Array {
  const h = e.header.slice();
  const pax: Record<string, string> = { ...e.pax };
  if (e.size > 0o77777777777) pax.size = String(e.size);
  if (!fitsUstar(name, 100)) pax.path = name;
  if (!fitsUstar(linkname, 100)) pax.linkpath = linkname;
  putString(h, 0, 100, fitsUstar(name, 100) ? name : name.slice(-99).replace(/[^\x20-\x7e]/g, "_"));
  putString(h, 157, 100, fitsUstar(linkname, 100) ? linkname : "");
  h.fill(0, 345, 500);
  putString(h, 257, 6, "ustar");
  putString(h, 263, 2, "00");
  if (e.size <= 0o77777777777) putOctal(h, 124, 12, e.size);
  checksum(h);
  if (Object.keys(pax).length === 0) return h;
  return concat(paxHeader(name, pax), h);
}

/** A ustar header of a regular file (or directory with `type` "5"). */
export function fileHeader(
  name: string,
  size: number,
  o: { mode?: number; uid?: number; gid?: number; mtime?: number; type?: string } = {},
): Uint8Array {
  const h = new Uint8Array(BLOCK);
  putString(h, 0, 100, name);
  putOctal(h, 100, 8, o.mode ?? 0o644);
  putOctal(h, 108, 8, o.uid ?? 0);
  putOctal(h, 116, 8, o.gid ?? 0);
  putOctal(h, 124, 12, size);
  putOctal(h, 136, 12, Math.floor(o.mtime ?? Date.now() / 1000));
  h[156] = (o.type ?? "0").charCodeAt(0);
  putString(h, 257, 6, "ustar");
  putString(h, 263, 2, "00");
  checksum(h);
  if (fitsUstar(name, 100) && size <= 0o77777777777) return h;
  const pax: Record<string, string> = {};
  if (!fitsUstar(name, 100)) pax.path = name;
  if (size > 0o77777777777) pax.size = String(size);
  return concat(paxHeader(name, pax), h);
}

/** Zero bytes that pad a body of `size` to a whole block. */
export function padding(size: number): number {
  return (BLOCK - (size % BLOCK)) % BLOCK;
}

/** The two zero blocks that end an archive. */
export const END_OF_ARCHIVE = new Uint8Array(2 * BLOCK);

/** A ReadableStream pulling from an async generator; cancelling the stream stops the generator. */
export function streamOf(gen: AsyncGenerator<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      try {
        const r = await gen.next();
        if (r.done) c.close();
        else c.enqueue(r.value);
      } catch (e) {
        c.error(e);
      }
    },
    async cancel(reason) {
      await gen.throw(reason instanceof Error ? reason : new Error("cancelled")).catch(() => {});
    },
  });
}

/** Byte arrays and streams one after the other, as one stream. */
export function concatStreams(parts: Array<Uint8Array | ReadableStream<Uint8Array>>): ReadableStream<Uint8Array> {
  let i = 0;
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  return new ReadableStream<Uint8Array>({
    async pull(ctrl) {
      for (;;) {
        if (i >= parts.length) return ctrl.close();
        const p = parts[i];
        if (p instanceof Uint8Array) {
          i++;
          if (p.length) return ctrl.enqueue(p);
          continue;
        }
        reader ??= p.getReader();
        const r = await reader.read();
        if (!r.done) return ctrl.enqueue(r.value);
        reader = null;
        i++;
      }
    },
    cancel(reason) {
      reader?.cancel(reason).catch(() => {});
    },
  });
}

function paxHeader(name: string, recs: Record<string, string>): Uint8Array {
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [];
  for (const [k, v] of Object.entries(recs)) {
    const body = ` ${k}=${v}\n`;
    const bodyLen = enc.encode(body).length;
    let len = bodyLen + String(bodyLen).length;
    if (String(len).length !== String(bodyLen).length) len = bodyLen + String(len).length;
    parts.push(enc.encode(`${len}${body}`));
  }
  const data = parts.reduce((a, b) => concat(a, b), new Uint8Array(0));
  const base = name.replace(/\/+$/, "").split("/").pop() || "entry";
  const h = fileHeader(`PaxHeaders/${base.replace(/[^\x20-\x7e]/g, "_")}`.slice(0, 99), data.length, { type: "x" });
  return concat(concat(h, data), new Uint8Array(padding(data.length)));
}

function parsePax(body: Uint8Array): Record<string, string> {
  const out: Record<string, string> = {};
  const text = new TextDecoder().decode(body);
  let at = 0;
  while (at < text.length) {
    const sp = text.indexOf(" ", at);
    if (sp < 0) break;
    const len = Number(text.slice(at, sp));
    if (!Number.isInteger(len) || len <= 0) break;
    const rec = text.slice(sp + 1, at + len - 1);
    const eq = rec.indexOf("=");
    if (eq > 0) out[rec.slice(0, eq)] = rec.slice(eq + 1);
    at += len;
  }
  return out;
}

function fitsUstar(s: string, max: number): boolean {
  return s.length < max && /^[\x20-\x7e]*$/.test(s);
}

function numeric(h: Uint8Array, at: number, len: number): number {
  if (h[at] & 0x80) {
    // GNU base-256
    let v = 0;
    for (let i = at + 1; i < at + len; i++) v = v * 256 + h[i];
    return v;
  }
  const s = cString(h, at, len).trim();
  return s ? Number.parseInt(s, 8) || 0 : 0;
}

function cString(b: Uint8Array, at: number, len: number): string {
  let end = at;
  while (end < at + len && b[end] !== 0) end++;
  return new TextDecoder().decode(b.subarray(at, end));
}

function putString(h: Uint8Array, at: number, len: number, s: string): void {
  h.fill(0, at, at + len);
  h.set(new TextEncoder().encode(s).subarray(0, len), at);
}

function putOctal(h: Uint8Array, at: number, len: number, v: number): void {
  putString(h, at, len, `${v.toString(8).padStart(len - 1, "0")}`);
}

function checksum(h: Uint8Array): void {
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  putString(h, 148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
}

async function* empty(): AsyncGenerator<Uint8Array> {}

async function* counted(gen: AsyncGenerator<Uint8Array>, add: (n: number) => void): AsyncGenerator<Uint8Array> {
  for await (const c of gen) {
    add(c.length);
    yield c;
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
