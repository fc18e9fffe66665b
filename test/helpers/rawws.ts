/**
 * A bare WebSocket client over TCP, for behaviour a browser-grade client hides: staying silent (no automatic pong),
 * sending frames at will, and seeing every frame the server sends (pings included).
 */

import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";

export interface RawFrame {
  opcode: number;
  payload: Buffer;
}

export interface RawWs {
  frames: RawFrame[];
  /** Close code from the server's close frame, when one arrived. */
  closeCode: number | null;
  ended: boolean;
  send(opcode: number, payload: Buffer | string): void;
  /** Stop reading from the socket: a client too slow to keep up. */
  pause(): void;
  destroy(): void;
}

/**
 * Perform the upgrade handshake on `port` for `path` with `headers` (a `host` among them replaces the default one);
 * resolves once the 101 arrives.
 */
export function rawWs(port: number, path: string, headers: Record<string, string>): Promise<RawWs> {
  return new Promise((resolve, reject) => {
    const sock: Socket = connect(port, "127.0.0.1");
    let buf = Buffer.alloc(0);
    let upgraded = false;
    const ws: RawWs = {
      frames: [],
      closeCode: null,
      ended: false,
      send(opcode, payload) {
        const data = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
        const mask = randomBytes(4);
        const head =
          data.length < 126
            ? Buffer.from([0x80 | opcode, 0x80 | data.length])
            : Buffer.from([0x80 | opcode, 0x80 | 126, data.length >> 8, data.length & 0xff]);
        const masked = Buffer.from(data.map((b, i) => b ^ mask[i % 4]));
        sock.write(Buffer.concat([head, mask, masked]));
      },
      pause: () => sock.pause(),
      destroy: () => sock.destroy(),
    };
    const ownHost = Object.keys(headers).some((k) => k.toLowerCase() === "host");
    const extra = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("");
    sock.on("connect", () =>
      sock.write(
        `GET ${path} HTTP/1.1\r\n${ownHost ? "" : `Host: 127.0.0.1:${port}\r\n`}Connection: Upgrade\r\nUpgrade: websocket\r\n` +
          `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\n${extra}\r\n`,
      ),
    );
    sock.on("data", (chunk) => {
      buf = Buffer.concat([buf, chunk as Buffer]);
      if (!upgraded) {
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buf.subarray(0, end).toString();
        if (!head.startsWith("HTTP/1.1 101")) return reject(new Error(`upgrade refused: ${head.split("\r\n")[0]}`));
        upgraded = true;
        buf = buf.subarray(end + 4);
        resolve(ws);
      }
      for (;;) {
        if (buf.length < 2) return;
        let len = buf[1] & 0x7f;
        let off = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          off = 4;
        } else if (len === 127) {
          if (buf.length < 10) return;
          len = Number(buf.readBigUInt64BE(2));
          off = 10;
        }
        if (buf.length < off + len) return;
        const frame = { opcode: buf[0] & 0x0f, payload: buf.subarray(off, off + len) };
        ws.frames.push(frame);
        if (frame.opcode === 8 && len >= 2) ws.closeCode = frame.payload.readUInt16BE(0);
        buf = buf.subarray(off + len);
      }
    });
    sock.on("close", () => (ws.ended = true));
    sock.on("error", (e) => (upgraded ? (ws.ended = true) : reject(e)));
  });
}

export const OP = { text: 1, close: 8, ping: 9, pong: 10 } as const;
