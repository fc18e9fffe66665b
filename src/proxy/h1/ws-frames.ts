/**
 * Where WebSocket frames begin and end in one direction of a tunnel (RFC 6455 5.2), read from the frame headers
 * only: payloads pass untouched and are skipped by length. A tunnel whose replica leaves can then put a Close frame
 * between two frames (control frames may sit between the fragments of a message, 5.4), never inside one.
 */

/** The Close frame a tunnel sends the client when its replica leaves: 1001 "going away" (7.4.1), unmasked. */
export const GOING_AWAY_FRAME = Buffer.from([0x88, 0x02, 0x03, 0xe9]);

/** WebSocket opcode of a Close frame. */
const CLOSE = 0x8;

export class FrameBoundaries {
  /** Payload bytes of the current frame still to come. */
  private left = 0;
  /** Header bytes of the next frame read so far (2 to 14 of them). */
  private readonly head: number[] = [];
  private need = 2;
  /** Close frames whose header has been read. */
  closes = 0;

  /** Between two frames: the bytes so far end a frame, or none came yet. */
  get atBoundary(): boolean {
    return this.left === 0 && this.head.length === 0;
  }

  /**
   * Read `buf` on from `from`. With `stop`, reading ends at the first frame boundary reached (`from` itself when the
   * stream is between frames there); returns the offset reading ended at (`buf.length` when it read all of it).
   */
  feed(buf: Uint8Array, stop = false, from = 0): number {
    let i = from;
    for (;;) {
      if (stop && this.atBoundary) return i;
      if (i >= buf.length) return i;
      if (this.left > 0) {
        const n = Math.min(this.left, buf.length - i);
        this.left -= n;
        i += n;
        continue;
      }
      const h = this.head;
      h.push(buf[i++]);
      if (h.length === 2) {
        const len7 = h[1] & 0x7f;
        this.need = 2 + (len7 === 126 ? 2 : len7 === 127 ? 8 : 0) + (h[1] & 0x80 ? 4 : 0);
      }
      if (h.length >= 2 && h.length === this.need) this.headerRead();
    }
  }

  private headerRead(): void {
    const h = this.head;
    const len7 = h[1] & 0x7f;
    let len = len7;
    if (len7 === 126) len = (h[2] << 8) | h[3];
    else if (len7 === 127) {
      len = 0;
      for (let k = 2; k < 10; k++) len = len * 256 + h[k];
    }
    if ((h[0] & 0x0f) === CLOSE) this.closes++;
    this.left = len;
    h.length = 0;
    this.need = 2;
  }
}
