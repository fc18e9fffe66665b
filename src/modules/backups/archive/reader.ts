/**
 * A streaming tar reader that vets every entry before its bytes may pass on: fed chunks of any size, it keeps at most
 * one header block and one entry's extended headers (each capped at 64 KiB) in memory, never an entry's data. What it
 * hands on (`take()`) is exactly the bytes of the entries it accepted, up to and including the end-of-archive marker.
 */
import { BLOCK, checksumOk, isZeroBlock, parseHeader, type RawHeader } from "./header";
import { cString, decodeName, nameProblem } from "./names";
import { type PaxRecords, parsePax, paxSize } from "./pax";
import { ArchiveRefused, overCap } from "./refused";

/** Largest pax or GNU long-name record read (Linux paths stop at 4 KiB; Go allows 1 MiB). */
export const EXT_MAX = 64 * 1024;

/** One accepted entry: a regular file or a directory with a safe relative name. */
export interface TarEntry {
  name: string;
  type: "file" | "directory";
  size: number;
  mode: number;
  uid: number;
  gid: number;
  mtime: number;
}

/** Why a type flag is refused (anything not listed here is refused as an unknown type). */
const REFUSED_TYPES: Record<string, string> = {
  "1": "hardlink",
  "2": "symlink",
  "3": "character device",
  "4": "block device",
  "6": "fifo",
  "7": "contiguous file",
  S: "sparse file",
  D: "gnu dump directory",
  M: "multi-volume continuation",
  V: "volume label",
};

const pad = (n: number) => Math.ceil(n / BLOCK) * BLOCK;

type Ext = { type: string; name: string; data: Uint8Array; fill: number; padLeft: number };

/** The vetting tar reader. `push` and `end` throw ArchiveRefused; `take` returns what may pass on since last time. */
export class TarReader {
  /** Bytes fed so far (the tar stream, after any gunzip). */
  bytes = 0;
  /** Accepted entries so far. */
  count = 0;
  /** The end-of-archive marker was read; later bytes are ignored (as GNU tar and Go do). */
  ended = false;

  private mode: "header" | "ext" | "body" | "end" = "header";
  private blk = new Uint8Array(BLOCK);
  private fill = 0;
  private held: Uint8Array[] = [];
  private out: Uint8Array[] = [];
  private fresh: TarEntry[] = [];
  private ext: Ext | null = null;
  private pax: PaxRecords | null = null;
  private longName: string | null = null;
  private longLink: string | null = null;
  private extName = "";
  private zeroSeen = false;
  private bodyLeft = 0;
  private entryName = "";

  constructor(private readonly opts: { maxBytes: number; passOn?: boolean }) {}

  /** Feed the next chunk of the tar stream. */
  push(chunk: Uint8Array): void {
    this.bytes += chunk.length;
    if (this.bytes > this.opts.maxBytes) throw new ArchiveRefused(null, overCap(this.opts.maxBytes));
    let at = 0;
    while (at < chunk.length && this.mode !== "end") {
      if (this.mode === "body") {
        const n = Math.min(this.bodyLeft, chunk.length - at);
        if (this.opts.passOn) this.out.push(chunk.subarray(at, at + n));
        this.bodyLeft -= n;
        at += n;
        if (this.bodyLeft === 0) this.mode = "header";
      } else if (this.mode === "ext") {
        at = this.extBytes(chunk, at);
      } else {
        const n = Math.min(BLOCK - this.fill, chunk.length - at);
        this.blk.set(chunk.subarray(at, at + n), this.fill);
        this.fill += n;
        at += n;
        if (this.fill === BLOCK) {
          this.fill = 0;
          this.block();
        }
      }
    }
  }

  /** The input is over: refuse anything cut short. */
  end(): void {
    if (this.mode === "end") return;
    if (this.mode === "body") throw new ArchiveRefused(this.entryName, "truncated entry data");
    if (this.mode === "ext") throw new ArchiveRefused(this.ext!.name, "truncated extended header");
    if (this.fill > 0) throw new ArchiveRefused(null, "truncated header");
    if (this.pax || this.longName !== null || this.longLink !== null)
      throw new ArchiveRefused(this.extName, "extended header without an entry");
    throw new ArchiveRefused(null, "truncated archive: no end-of-archive marker");
  }

  /** Bytes that may pass on and entries accepted since the last call. */
  take(): { data: Uint8Array[]; entries: TarEntry[] } {
    const r = { data: this.out, entries: this.fresh };
    this.out = [];
    this.fresh = [];
    return r;
  }

  private hold(b: Uint8Array): void {
    if (this.opts.passOn) this.held.push(b.slice());
  }

  private release(): void {
    if (this.opts.passOn) this.out.push(...this.held);
    this.held = [];
  }

  private block(): void {
    const b = this.blk;
    this.hold(b);
    if (this.zeroSeen) {
      // Go's reader refuses a lone zero block followed by data, GNU tar stops at it: refuse rather than pick one
      if (!isZeroBlock(b)) throw new ArchiveRefused(null, "a lone zero block before more entries");
      this.mode = "end";
      this.ended = true;
      this.release();
      return;
    }
    if (isZeroBlock(b)) {
      if (this.pax || this.longName !== null || this.longLink !== null)
        throw new ArchiveRefused(this.extName, "extended header without an entry");
      this.zeroSeen = true;
      return;
    }
    if (!checksumOk(b)) throw new ArchiveRefused(decodeName(cString(b, 0, 100).bytes), "bad header checksum");
    const h = parseHeader(b);
    if (h.problem) throw new ArchiveRefused(this.pax?.get("path") ?? this.longName ?? h.name, h.problem);
    if ("xgLK".includes(h.type)) {
      this.startExt(h);
      return;
    }
    if (h.type === "0" || h.type === "\0" || h.type === "5") {
      this.entry(h);
      return;
    }
    const name = this.pax?.get("path") ?? this.longName ?? h.name;
    const what = REFUSED_TYPES[h.type];
    throw new ArchiveRefused(name, what ?? `unknown entry type ${JSON.stringify(h.type)}`);
  }

  private startExt(h: RawHeader): void {
    if (typeof h.size === "string") throw new ArchiveRefused(h.name, `bad size field: ${h.size}`);
    if (h.size > EXT_MAX) throw new ArchiveRefused(h.name, "extended header over 64 KiB");
    const repeated =
      (h.type === "x" && this.pax) || (h.type === "L" && this.longName !== null) || (h.type === "K" && this.longLink !== null);
    if (repeated) throw new ArchiveRefused(h.name, "repeated extended header");
    if (h.type === "g" && (this.pax || this.longName !== null || this.longLink !== null))
      throw new ArchiveRefused(h.name, "global header between an entry and its extended headers");
    this.extName = h.name;
    this.ext = { type: h.type, name: h.name, data: new Uint8Array(h.size), fill: 0, padLeft: pad(h.size) - h.size };
    this.mode = "ext";
    if (h.size === 0) this.extDone();
  }

  private extBytes(chunk: Uint8Array, at: number): number {
    const e = this.ext!;
    if (e.fill < e.data.length) {
      const n = Math.min(e.data.length - e.fill, chunk.length - at);
      e.data.set(chunk.subarray(at, at + n), e.fill);
      this.hold(chunk.subarray(at, at + n));
      e.fill += n;
      at += n;
    }
    if (e.fill === e.data.length && e.padLeft > 0) {
      const n = Math.min(e.padLeft, chunk.length - at);
      this.hold(chunk.subarray(at, at + n));
      e.padLeft -= n;
      at += n;
    }
    if (e.fill === e.data.length && e.padLeft === 0) this.extDone();
    return at;
  }

  private extDone(): void {
    const e = this.ext!;
    this.ext = null;
    this.mode = "header";
    if (e.type === "x" || e.type === "g") {
      const recs = parsePax(e.data);
      if (typeof recs === "string") throw new ArchiveRefused(e.name, recs);
      if (e.type === "x") this.pax = recs;
      // Go (the engine) ignores global headers, GNU tar applies them to every later entry: refuse what they would move
      else
        for (const k of ["path", "linkpath", "size"])
          if (recs.has(k)) throw new ArchiveRefused(e.name, `global pax header sets ${k}`);
      return;
    }
    const { bytes, hidden } = cString(e.data);
    const text = decodeName(bytes);
    if (hidden) throw new ArchiveRefused(text, "NUL in name");
    if (e.type === "L") this.longName = text;
    else this.longLink = text;
  }

  private entry(h: RawHeader): void {
    const pax = this.pax;
    const name = pax?.get("path") ?? this.longName ?? h.name;
    this.entryName = name;
    // Go takes the GNU long name over a pax path, GNU tar the pax path (found by the engine fuzz): never both
    if (this.longName !== null && pax?.has("path")) throw new ArchiveRefused(name, "both a gnu long name and a pax path");
    const empty = nameProblem(name);
    if (empty) throw new ArchiveRefused(name, empty);
    if (h.hiddenName) throw new ArchiveRefused(name, "NUL in name");
    // every reading a reader could make of the name must be safe, not only the one we would pick
    for (const n of [h.name, ...h.altNames, this.longName, pax?.get("path")]) {
      const problem = n ? nameProblem(n) : null;
      if (problem) throw new ArchiveRefused(name, problem);
    }
    if (h.linkname || this.longLink !== null || pax?.has("linkpath"))
      throw new ArchiveRefused(name, "link target on a non-link entry");
    if (typeof h.size === "string") throw new ArchiveRefused(name, `bad size field: ${h.size}`);
    const size = pax?.has("size") ? paxSize(pax.get("size")!) : h.size;
    if (typeof size === "string") throw new ArchiveRefused(name, size);
    const dir = h.type === "5" || (h.type === "\0" && name.endsWith("/"));
    // readers skip no data for a directory whatever its size says: a size there would frame entries differently
    if (dir && size !== 0) throw new ArchiveRefused(name, "directory with data");
    if (!dir && name.endsWith("/")) throw new ArchiveRefused(name, "file name ends with a slash");
    if (size > this.opts.maxBytes) throw new ArchiveRefused(name, `entry larger than the cap of ${this.opts.maxBytes} bytes`);
    this.pax = null;
    this.longName = null;
    this.longLink = null;
    this.release();
    this.count++;
    this.fresh.push({ name, type: dir ? "directory" : "file", size, mode: h.mode, uid: h.uid, gid: h.gid, mtime: h.mtime });
    this.bodyLeft = pad(size);
    this.mode = this.bodyLeft > 0 ? "body" : "header";
  }
}
