/**
 * Git's pkt-line framing (four hex digits of length, then the payload; `0000` is a flush), read incrementally from a
 * byte stream whose every length is checked: a remote cannot make a line longer than the format allows or send a
 * length that is not four hex digits.
 */
import { GitSyncError } from "./errors";

/** The largest pkt-line the format allows (65520 bytes, length prefix included). */
export const MAX_PKT = 65520;

const enc = new TextEncoder();

/** One pkt-line of `text` (a trailing newline is the caller's). */
export function pkt(text: string | Uint8Array): Uint8Array {
  const body = typeof text === "string" ? enc.encode(text) : text;
  const out = new Uint8Array(body.length + 4);
  out.set(enc.encode((body.length + 4).toString(16).padStart(4, "0")), 0);
  out.set(body, 4);
  return out;
}

/** The flush packet. */
export const FLUSH = enc.encode("0000");

/** A packet: its payload, or null for a flush (`0000`) or a delimiter (`0001`). */
export type Packet = Uint8Array | null;

/** Reads pkt-lines from a stream of chunks; `next()` is null at the end of the stream. */
export class PktReader {
  private buf: Uint8Array = new Uint8Array(0);
  private done = false;
  private readonly it: AsyncIterator<Uint8Array>;

  constructor(
    source: AsyncIterable<Uint8Array>,
    private readonly where: string,
  ) {
    this.it = source[Symbol.asyncIterator]();
  }

  /**
   * Bytes available without a read, at least `n` unless the stream ended. The chunks read are joined once, when
   * enough are in: joining on every chunk made a packet sent a byte at a time cost its length squared.
   */
  private async fill(n: number): Promise<boolean> {
    if (this.buf.length >= n) return true;
    const parts: Uint8Array[] = this.buf.length > 0 ? [this.buf] : [];
    let have = this.buf.length;
    while (have < n && !this.done) {
      const r = await this.it.next();
      if (r.done) {
        this.done = true;
        break;
      }
      parts.push(r.value);
      have += r.value.length;
    }
    if (parts.length === 1) this.buf = parts[0];
    else if (parts.length > 1) {
      const merged = new Uint8Array(have);
      let at = 0;
      for (const p of parts) {
        merged.set(p, at);
        at += p.length;
      }
      this.buf = merged;
    }
    return this.buf.length >= n;
  }

  private take(n: number): Uint8Array {
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }

  /** The next packet; `undefined` when the stream ended cleanly between packets. */
  async next(): Promise<Packet | undefined> {
    if (!(await this.fill(4))) {
      if (this.buf.length === 0) return undefined;
      throw this.bad("the stream ended inside a packet length");
    }
    const head = new TextDecoder().decode(this.take(4));
    if (!/^[0-9a-f]{4}$/.test(head)) throw this.bad("a packet length is not four hex digits");
    const len = Number.parseInt(head, 16);
    if (len === 0 || len === 1 || len === 2) return null;
    if (len < 4 || len > MAX_PKT) throw this.bad(`a packet length of ${len} is outside the format`);
    if (!(await this.fill(len - 4))) throw this.bad("the stream ended inside a packet");
    return this.take(len - 4).slice();
  }

  /** Close the underlying stream early. */
  async cancel(): Promise<void> {
    await this.it.return?.();
  }

  private bad(why: string): GitSyncError {
    return new GitSyncError("failed", `the remote ${this.where} sent a malformed answer (${why})`);
  }
}

/** A packet's text without its trailing newline. */
export function pktText(p: Uint8Array): string {
  const t = new TextDecoder().decode(p);
  return t.endsWith("\n") ? t.slice(0, -1) : t;
}

/**
 * Text the remote sent (an `ERR` line, band 3, a push report), fit for a message: C0 and C1 control characters
 * escaped (the message reaches the terminal of whoever runs `sundeck git status`), cut at `max` characters.
 */
export function shownText(text: string, max = 200): string {
  const esc = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
  return esc.length > max ? `${esc.slice(0, max)}…` : esc;
}
