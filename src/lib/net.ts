/**
 * IP address and CIDR handling: parsing, matching, and the client address of a request behind trusted proxies.
 * Used by the API (rate limits, login limits, activity ip) and later by the proxy's allowlists.
 */
import { isIP } from "node:net";

/** A parsed network: address bytes and prefix length. IPv4-mapped IPv6 is folded to IPv4. */
export interface Cidr {
  bytes: Uint8Array;
  bits: number;
}

function v4Bytes(s: string): Uint8Array | null {
  const parts = s.split(".");
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    if (!/^\d{1,3}$/.test(parts[i])) return null;
    const n = Number(parts[i]);
    if (n > 255) return null;
    out[i] = n;
  }
  return out;
}

function v6Bytes(s: string): Uint8Array | null {
  let text = s;
  const zone = text.indexOf("%");
  if (zone >= 0) text = text.slice(0, zone);
  let tail: Uint8Array | null = null;
  const lastColon = text.lastIndexOf(":");
  if (text.includes(".", lastColon)) {
    tail = v4Bytes(text.slice(lastColon + 1));
    if (!tail) return null;
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parse = (h: string) => (h === "" ? [] : h.split(":"));
  const head = parse(halves[0]);
  const rest = halves.length === 2 ? parse(halves[1]) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...rest];
  const out = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(groups[i])) return null;
    const n = parseInt(groups[i], 16);
    out[i * 2] = n >> 8;
    out[i * 2 + 1] = n & 0xff;
  }
  if (tail) out.set(tail, 12);
  return out;
}

/** Parse an IP address to bytes (4 for IPv4 and IPv4-mapped IPv6, 16 otherwise), or null. */
export function ipBytes(ip: string): Uint8Array | null {
  const kind = isIP(ip.includes("%") ? ip.slice(0, ip.indexOf("%")) : ip);
  if (kind === 4) return v4Bytes(ip);
  if (kind !== 6) return null;
  const b = v6Bytes(ip);
  if (!b) return null;
  const mapped = b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
  return mapped ? b.slice(12) : b;
}

/** Parse `addr` or `addr/bits`; null when malformed. */
export function parseCidr(text: string): Cidr | null {
  const [addr, bitsText, extra] = text.trim().split("/");
  if (extra !== undefined) return null;
  const bytes = ipBytes(addr);
  if (!bytes) return null;
  const max = bytes.length * 8;
  let bits = max;
  if (bitsText !== undefined) {
    if (!/^\d{1,3}$/.test(bitsText)) return null;
    bits = Number(bitsText);
    // an IPv4-mapped network given in IPv6 form keeps its IPv4 prefix
    if (bytes.length === 4 && addr.includes(":")) bits -= 96;
    if (bits < 0 || bits > max) return null;
  }
  return { bytes, bits };
}

/** Whether `ip` lies inside `net`. */
export function cidrContains(net: Cidr, ip: Uint8Array): boolean {
  if (net.bytes.length !== ip.length) return false;
  let bits = net.bits;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((net.bytes[i] & mask) !== (ip[i] & mask)) return false;
  }
  return true;
}

/** A list of networks answering "is this address in any of them". */
export class CidrSet {
  private readonly nets: Cidr[];
  constructor(entries: readonly string[]) {
    this.nets = entries.map((e) => {
      const c = parseCidr(e);
      if (!c) throw new Error(`invalid address or CIDR: ${e}`);
      return c;
    });
  }
  get size(): number {
    return this.nets.length;
  }
  has(ip: string): boolean {
    const b = ipBytes(ip);
    return !!b && this.nets.some((n) => cidrContains(n, b));
  }
}

/** Normalise an address for display and keys: IPv4-mapped IPv6 becomes dotted IPv4. */
export function normalizeIp(ip: string): string {
  const b = ipBytes(ip);
  return b?.length === 4 ? Array.from(b).join(".") : ip;
}

/**
 * The client address of a request: the peer address, unless the peer is a trusted proxy, in which case the
 * right-most X-Forwarded-For entry that is not itself a trusted proxy.
 */
export function clientIp(peer: string, forwardedFor: string | null, trusted: CidrSet): string {
  const direct = normalizeIp(peer);
  if (!forwardedFor || trusted.size === 0 || !trusted.has(direct)) return direct;
  const hops = forwardedFor
    .split(",")
    .map((h) => normalizeIp(h.trim()))
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!ipBytes(hops[i])) return direct;
    if (!trusted.has(hops[i])) return hops[i];
  }
  return hops[0] ?? direct;
}
