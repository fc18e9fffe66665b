/**
 * Just enough of a TLS ClientHello parser to route a connection before any TLS library sees it: the server name
 * (SNI) and the offered ALPN protocols, read from the first handshake record.
 */

/** What a ClientHello asks for. */
export interface Hello {
  sni: string | null;
  alpn: string[];
}

/** Largest first record we wait for (a TLS record holds at most 16 KiB plus its header). */
export const MAX_HELLO_BYTES = 16_384 + 5;

/**
 * How many bytes the first TLS record needs in total, or 0 when `buf` cannot be TLS (route it unparsed).
 * Returns 5 until the record header is in.
 */
export function helloRecordLength(buf: Uint8Array): number {
  if (buf.length >= 1 && buf[0] !== 0x16) return 0;
  if (buf.length < 5) return 5;
  return Math.min(5 + ((buf[3] << 8) | buf[4]), MAX_HELLO_BYTES);
}

/** Parse the ClientHello in the first record of `buf`; null when it is not one. A truncated hello yields what it has. */
export function parseClientHello(buf: Uint8Array): Hello | null {
  if (buf.length < 9 || buf[0] !== 0x16 || buf[5] !== 0x01) return null;
  const end = Math.min(buf.length, 5 + ((buf[3] << 8) | buf[4]));
  let p = 9 + 2 + 32; // record header, handshake header, client_version, random
  const u8 = (at: number) => (at < end ? buf[at] : -1);
  const u16 = (at: number) => (at + 1 < end ? (buf[at] << 8) | buf[at + 1] : -1);
  const skip8 = () => {
    const n = u8(p);
    p = n < 0 ? end : p + 1 + n;
  };
  const skip16 = () => {
    const n = u16(p);
    p = n < 0 ? end : p + 2 + n;
  };
  skip8(); // session id
  skip16(); // cipher suites
  skip8(); // compression methods
  const hello: Hello = { sni: null, alpn: [] };
  const extEnd = Math.min(end, p + 2 + Math.max(0, u16(p)));
  p += 2;
  while (p + 4 <= extEnd) {
    const type = u16(p);
    const len = u16(p + 2);
    const body = p + 4;
    const next = Math.min(body + len, extEnd);
    if (type === 0x0000) hello.sni = readSni(buf, body, next);
    else if (type === 0x0010) hello.alpn = readAlpn(buf, body, next);
    p = body + len;
  }
  return hello;
}

function readSni(buf: Uint8Array, start: number, end: number): string | null {
  let p = start + 2; // server_name_list length
  while (p + 3 <= end) {
    const type = buf[p];
    const len = (buf[p + 1] << 8) | buf[p + 2];
    if (type === 0 && p + 3 + len <= end) return new TextDecoder().decode(buf.subarray(p + 3, p + 3 + len)).toLowerCase();
    p += 3 + len;
  }
  return null;
}

function readAlpn(buf: Uint8Array, start: number, end: number): string[] {
  const out: string[] = [];
  let p = start + 2; // protocol_name_list length
  while (p < end) {
    const len = buf[p];
    if (p + 1 + len > end) break;
    out.push(new TextDecoder().decode(buf.subarray(p + 1, p + 1 + len)));
    p += 1 + len;
  }
  return out;
}
