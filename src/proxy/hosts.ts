/**
 * Host names as the proxy compares them: lower case, no port, no trailing dot, IPv6 literals without brackets and in
 * their canonical (RFC 5952) text, so `[2001:DB8:0::1]:443` and `2001:db8::1` are the same host.
 */
import { ipBytes } from "../lib/net";

/** RFC 5952 text of 16 IPv6 address bytes (longest run of two or more zero groups shortened to `::`). */
function v6Text(b: Uint8Array): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((b[i] << 8) | b[i + 1]);
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = (gs: number[]) => gs.map((g) => g.toString(16)).join(":");
  if (best < 0) return hex(groups);
  return `${hex(groups.slice(0, best))}::${hex(groups.slice(best + bestLen))}`;
}

/** Canonical text of an IPv6 literal (IPv4-mapped ones become dotted IPv4), or the input lower-cased. */
function canonicalV6(text: string): string {
  const b = ipBytes(text);
  if (!b) return text.toLowerCase();
  return b.length === 4 ? Array.from(b).join(".") : v6Text(b);
}

/** True when `host` needs no work: lower-case letters, digits, dots and dashes, not ending in a dot. */
function plain(host: string): boolean {
  for (let i = 0; i < host.length; i++) {
    const c = host.charCodeAt(i);
    // a-z, 0-9, '-', '.'
    if (!((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45 || c === 46)) return false;
  }
  return host.length > 0 && host.charCodeAt(host.length - 1) !== 46;
}

/**
 * The comparable form of a Host header or URL authority: port stripped, lower-cased, trailing dot removed, IPv6
 * literal unbracketed and canonical. Allocation-free for the common already-plain host.
 */
export function normalizeHost(raw: string): string {
  if (plain(raw)) return raw;
  let host = raw.trim();
  if (host.startsWith("[")) {
    const end = host.indexOf("]");
    return canonicalV6(end < 0 ? host.slice(1) : host.slice(1, end));
  }
  const colon = host.indexOf(":");
  if (colon >= 0) {
    // two or more colons without brackets: a bare IPv6 literal, which cannot carry a port
    if (host.indexOf(":", colon + 1) >= 0) return canonicalV6(host);
    host = host.slice(0, colon);
  }
  host = host.toLowerCase();
  while (host.endsWith(".")) host = host.slice(0, -1);
  return host;
}

/** The host a `*.parent` wildcard would cover `host` with: the text after the first label, or null. */
export function wildcardParent(host: string): string | null {
  const dot = host.indexOf(".");
  return dot > 0 && dot < host.length - 1 ? host.slice(dot + 1) : null;
}
