/**
 * Message bodies in the raw engine: a reader that finds where a body ends (Content-Length, chunked, or the
 * connection's close) and a chunk encoder. Chunked bodies are decoded strictly (sizes, extensions, trailer fields,
 * every CRLF, as llhttp reads them) and re-encoded by the engine, so extensions and trailers are checked and dropped,
 * never forwarded as received.
 */
import { FramingError } from "./framing";

enum Chunk {
  Size,
  SizeMore,
  ExtName,
  ExtAfterName,
  ExtValue,
  ExtToken,
  ExtQuoted,
  ExtEscape,
  ExtAfterQuote,
  SizeLf,
  Data,
  DataCr,
  DataLf,
  TrailerStart,
  TrailerName,
  TrailerValue,
  TrailerLf,
  EndLf,
  Done,
}

/** Most hex digits of a chunk size (llhttp takes 16; leading zeros count). */
const MAX_SIZE_DIGITS = 16;
/** Most bytes of a chunk-size line's extensions. */
const MAX_EXT_BYTES = 4096;

// tchar: ! # $ % & ' * + - . ^ _ ` | ~ DIGIT ALPHA
const TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~") TCHAR[c.charCodeAt(0)] = 1;
for (let c = 48; c <= 57; c++) TCHAR[c] = 1;
for (let c = 65; c <= 90; c++) {
  TCHAR[c] = 1;
  TCHAR[c + 32] = 1;
}

const hexValue = (b: number): number =>
  b >= 48 && b <= 57 ? b - 48 : b >= 97 && b <= 102 ? b - 87 : b >= 65 && b <= 70 ? b - 55 : -1;
/** qdtext of a quoted extension value: HTAB, SP, VCHAR except '"' and '\', obs-text. */
const qdtext = (b: number): boolean => b === 9 || b === 32 || b === 33 || (b >= 35 && b <= 126 && b !== 92) || b >= 128;
/** A byte of a field value: HTAB, SP, VCHAR, obs-text. */
const fieldByte = (b: number): boolean => b === 9 || (b >= 32 && b !== 127);

/** Limits on a chunked body's trailer section (the engine's header limits). */
export interface TrailerLimits {
  maxHeaders: number;
  maxHeaderBytes: number;
}

/**
 * Finds where a body ends in the bytes fed to it. `feed` returns how many bytes of `buf` from `start` belong to the
 * body; once `done`, what follows belongs to the next message. A chunked body hands its payload out through `onData`
 * (the engine re-encodes it); other bodies pass through as they are when no `onData` is given.
 */
export class BodyReader {
  done: boolean;
  private remaining: number;
  private state = Chunk.Size;
  private size = 0;
  private sizeDigits = 0;
  private lineBytes = 0;
  private trailers = 0;
  private trailerBytes = 0;

  constructor(
    readonly framing: import("./framing").Framing,
    private readonly onData?: (buf: Buffer, start: number, end: number) => void,
    private readonly errorStatus: 400 | 502 = 400,
    private readonly limits: TrailerLimits = { maxHeaders: 100, maxHeaderBytes: 16 * 1024 },
  ) {
    this.remaining = framing.kind === "length" ? framing.length : 0;
    this.done = framing.kind === "none" || (framing.kind === "length" && framing.length === 0);
  }

  /** Bytes pass through as they are (no `onData`): the caller forwards what `feed` counts. */
  get passThrough(): boolean {
    return this.onData === undefined;
  }

  feed(buf: Buffer, start = 0): number {
    if (this.done) return 0;
    const f = this.framing;
    if (f.kind === "close") {
      this.onData?.(buf, start, buf.length);
      return buf.length - start;
    }
    if (f.kind === "length") {
      const n = Math.min(this.remaining, buf.length - start);
      this.remaining -= n;
      if (this.remaining === 0) this.done = true;
      this.onData?.(buf, start, start + n);
      return n;
    }
    return this.feedChunked(buf, start);
  }

  private fail(message: string): never {
    throw new FramingError(this.errorStatus, message);
  }

  /** Count a byte of the chunk-size line's extensions. */
  private ext(): void {
    if (++this.lineBytes > MAX_EXT_BYTES) this.fail("chunk extension too long");
  }

  /** Count a byte of the trailer section. */
  private trailerByte(): void {
    if (++this.trailerBytes > this.limits.maxHeaderBytes) this.fail("trailer section too large");
  }

  private feedChunked(buf: Buffer, start: number): number {
    let i = start;
    while (i < buf.length && this.state !== Chunk.Done) {
      if (this.state === Chunk.Data) {
        const n = Math.min(this.remaining, buf.length - i);
        this.onData?.(buf, i, i + n);
        this.remaining -= n;
        i += n;
        if (this.remaining === 0) this.state = Chunk.DataCr;
        continue;
      }
      this.step(buf[i]);
      i++;
    }
    if (this.state === Chunk.Done) this.done = true;
    return i - start;
  }

  /** One byte of everything around the chunk data: size lines, CRLFs, the trailer section. */
  private step(b: number): void {
    switch (this.state) {
      case Chunk.Size:
      case Chunk.SizeMore: {
        const d = hexValue(b);
        if (d >= 0) {
          if (++this.sizeDigits > MAX_SIZE_DIGITS) this.fail("chunk size too long");
          this.size = this.size * 16 + d;
          if (this.size > Number.MAX_SAFE_INTEGER) this.fail("chunk size too large");
          this.state = Chunk.SizeMore;
        } else if (this.state === Chunk.Size) this.fail("invalid chunk size");
        else if (b === 13) this.state = Chunk.SizeLf;
        else if (b === 59) this.state = Chunk.ExtName;
        else this.fail("invalid chunk size");
        return;
      }
      case Chunk.ExtName:
      case Chunk.ExtAfterName:
        this.ext();
        if (TCHAR[b]) this.state = Chunk.ExtAfterName;
        else if (this.state === Chunk.ExtName) this.fail("invalid chunk extension");
        else if (b === 61) this.state = Chunk.ExtValue;
        else this.afterExt(b);
        return;
      case Chunk.ExtValue:
        this.ext();
        if (TCHAR[b]) this.state = Chunk.ExtToken;
        else if (b === 34) this.state = Chunk.ExtQuoted;
        // `;name=` with nothing after it: llhttp takes it, so do we
        else if (b === 13) this.state = Chunk.SizeLf;
        else this.fail("invalid chunk extension");
        return;
      case Chunk.ExtToken:
        this.ext();
        if (!TCHAR[b]) this.afterExt(b);
        return;
      case Chunk.ExtQuoted:
        this.ext();
        if (b === 34) this.state = Chunk.ExtAfterQuote;
        else if (b === 92) this.state = Chunk.ExtEscape;
        else if (!qdtext(b)) this.fail("invalid chunk extension");
        return;
      case Chunk.ExtEscape:
        this.ext();
        if (!fieldByte(b)) this.fail("invalid chunk extension");
        this.state = Chunk.ExtQuoted;
        return;
      case Chunk.ExtAfterQuote:
        this.ext();
        this.afterExt(b);
        return;
      case Chunk.SizeLf:
        if (b !== 10) this.fail("chunk size line without LF");
        this.lineBytes = 0;
        this.sizeDigits = 0;
        if (this.size === 0) this.state = Chunk.TrailerStart;
        else {
          this.remaining = this.size;
          this.size = 0;
          this.state = Chunk.Data;
        }
        return;
      case Chunk.DataCr:
        if (b !== 13) this.fail("chunk without CRLF");
        this.state = Chunk.DataLf;
        return;
      case Chunk.DataLf:
        if (b !== 10) this.fail("chunk without CRLF");
        this.state = Chunk.Size;
        return;
      case Chunk.TrailerStart:
        this.trailerByte();
        if (b === 13) this.state = Chunk.EndLf;
        else if (TCHAR[b]) {
          if (++this.trailers > this.limits.maxHeaders) this.fail("too many trailer fields");
          this.state = Chunk.TrailerName;
        } else this.fail("invalid trailer field");
        return;
      case Chunk.TrailerName:
        this.trailerByte();
        if (b === 58) this.state = Chunk.TrailerValue;
        else if (!TCHAR[b]) this.fail("invalid trailer field");
        return;
      case Chunk.TrailerValue:
        this.trailerByte();
        if (b === 13) this.state = Chunk.TrailerLf;
        else if (!fieldByte(b)) this.fail("invalid trailer field");
        return;
      case Chunk.TrailerLf:
        this.trailerByte();
        if (b !== 10) this.fail("trailer line without LF");
        this.state = Chunk.TrailerStart;
        return;
      case Chunk.EndLf:
        if (b !== 10) this.fail("chunked body without final CRLF");
        this.state = Chunk.Done;
        return;
    }
  }

  /** What may follow an extension: another one, or the end of the size line. */
  private afterExt(b: number): void {
    if (b === 59) this.state = Chunk.ExtName;
    else if (b === 13) this.state = Chunk.SizeLf;
    else this.fail("invalid chunk extension");
  }
}

const LAST_CHUNK = Buffer.from("0\r\n\r\n", "latin1");

/**
 * The chunked encoding of `parts` (each a chunk of its own; empty ones left out), followed by the last chunk when
 * `last`. One buffer, so it leaves in one write.
 */
export function encodeChunks(parts: Buffer[], last: boolean): Buffer {
  let total = last ? LAST_CHUNK.length : 0;
  const sizes: string[] = [];
  for (const p of parts) {
    const s = p.length.toString(16);
    sizes.push(s);
    if (p.length > 0) total += s.length + 4 + p.length;
  }
  const out = Buffer.allocUnsafe(total);
  let o = 0;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    if (p.length === 0) continue;
    o += out.write(sizes[i], o, "latin1");
    out[o++] = 13;
    out[o++] = 10;
    o += p.copy(out, o);
    out[o++] = 13;
    out[o++] = 10;
  }
  if (last) LAST_CHUNK.copy(out, o);
  return out;
}
