/**
 * IPv4 ranges as integer intervals, for carving a pool into equal blocks and telling which blocks are free of the
 * ranges already taken (other networks, host routes). Pure.
 */

/** An IPv4 network: its first and last address as unsigned 32-bit integers, and its prefix length. */
export interface Range4 {
  first: number;
  last: number;
  bits: number;
}

/** `a.b.c.d/n` (the network's own address: no host bits set), or null. */
export function parseRange4(text: string): Range4 | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(text.trim());
  if (!m) return null;
  const octets = m.slice(1, 5).map(Number);
  const bits = Number(m[5]);
  if (octets.some((o) => o > 255) || bits > 32) return null;
  const addr = ((octets[0] << 24) | (octets[1] << 16) | (octets[2] << 8) | octets[3]) >>> 0;
  const size = 2 ** (32 - bits);
  if (addr % size !== 0) return null;
  return { first: addr, last: addr + size - 1, bits };
}

/** The range of any address with a prefix (host bits dropped), as a route table or the engine may give it; or null. */
export function coveringRange4(text: string): Range4 | null {
  const m = /^(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})$/.exec(text.trim());
  if (!m) return null;
  const octets = m[1].split(".").map(Number);
  const bits = Number(m[2]);
  if (octets.some((o) => o > 255) || bits > 32) return null;
  const addr = ((octets[0] << 24) | (octets[1] << 16) | (octets[2] << 8) | octets[3]) >>> 0;
  const size = 2 ** (32 - bits);
  const first = addr - (addr % size);
  return { first, last: first + size - 1, bits };
}

export function formatRange4(r: Range4): string {
  const a = r.first;
  return `${a >>> 24}.${(a >>> 16) & 255}.${(a >>> 8) & 255}.${a & 255}/${r.bits}`;
}

export const overlaps = (a: Range4, b: Range4) => a.first <= b.last && b.first <= a.last;

/** How many blocks of prefix `bits` the pool holds (0 when the blocks are larger than the pool). */
export function blockCount(pool: Range4, bits: number): number {
  return bits < pool.bits ? 0 : 2 ** (bits - pool.bits);
}

/** The pool's first block of prefix `bits` that overlaps none of `taken`, or null when every one does. */
export function firstFreeBlock(pool: Range4, bits: number, taken: readonly Range4[]): Range4 | null {
  const size = 2 ** (32 - bits);
  // only what meets the pool matters; sorted, one pass skips each taken range once
  const inPool = taken.filter((t) => overlaps(t, pool)).sort((a, b) => a.first - b.first);
  let at = pool.first;
  let i = 0;
  while (at + size - 1 <= pool.last) {
    const block = { first: at, last: at + size - 1, bits };
    while (i < inPool.length && inPool[i].last < block.first) i++;
    const hit = inPool.slice(i).find((t) => overlaps(t, block));
    if (!hit) return block;
    // jump past the range in the way, to the next block boundary
    at = Math.max(at + size, Math.ceil((hit.last + 1) / size) * size);
  }
  return null;
}

/** RFC 1918 private ranges and the shared CGNAT range (RFC 6598): where a pool belongs. */
const PRIVATE = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"].map((t) => parseRange4(t)!);

export const isPrivateRange4 = (r: Range4) => PRIVATE.some((p) => r.first >= p.first && r.last <= p.last);
