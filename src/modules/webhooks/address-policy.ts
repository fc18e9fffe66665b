/**
 * Which addresses an alert webhook may be delivered to. IPv6 is an allowlist: global unicast (2000::/3) only, less the
 * special-purpose blocks inside it; IPv4 has no such prefix, so every special-purpose block of the IANA registry that
 * is not globally reachable is refused. Addresses that carry an IPv4 address (IPv4-mapped, NAT64 64:ff9b::/96) are
 * judged by that IPv4 address. The answer names the address to dial, rebuilt from the parsed bytes, never the text.
 */
import { isIP } from "node:net";
import { type Cidr, cidrContains, ipBytes, parseCidr } from "../../lib/net";

/** Why an address is refused; the `PRIVATE_KINDS` pass when private destinations are allowed. */
export type Refusal =
  | "unspecified"
  | "private"
  | "loopback"
  | "shared (cgnat)"
  | "unique local"
  | "link-local"
  | "multicast"
  | "broadcast"
  | "reserved"
  | "documentation"
  | "benchmarking"
  | "ietf protocol assignment"
  | "6to4"
  | "teredo"
  | "nat64 local use"
  | "ipv4-compatible"
  | "discard-only"
  | "site-local"
  | "not global unicast"
  | "scoped"
  | "not an ip address";

/** What `webhooks.allow_private_destinations` lets through (a LAN receiver); never link-local (cloud metadata). */
export const PRIVATE_KINDS: ReadonlySet<Refusal> = new Set(["private", "loopback", "shared (cgnat)", "unique local"]);

/** What to append to a refusal the setting would let through: how to allow it; "" for the others. */
export function privateHint(reason: Refusal): string {
  return PRIVATE_KINDS.has(reason) ? "; set webhooks.allow_private_destinations: true to allow LAN destinations" : "";
}

/** The verdict on one address: the address to dial when allowed, else why not. */
export type AddressVerdict = { ok: true; address: string } | { ok: false; address: string; reason: Refusal };

const table = (rows: Array<[string, Refusal]>) => rows.map(([cidr, reason]) => ({ net: parseCidr(cidr) as Cidr, reason }));

// first match wins: narrower blocks come before the blocks holding them
const V4 = table([
  ["0.0.0.0/8", "unspecified"],
  ["10.0.0.0/8", "private"],
  ["100.64.0.0/10", "shared (cgnat)"],
  ["127.0.0.0/8", "loopback"],
  ["169.254.0.0/16", "link-local"],
  ["172.16.0.0/12", "private"],
  ["192.0.0.0/24", "ietf protocol assignment"],
  ["192.0.2.0/24", "documentation"],
  ["192.88.99.0/24", "6to4"],
  ["192.168.0.0/16", "private"],
  ["198.18.0.0/15", "benchmarking"],
  ["198.51.100.0/24", "documentation"],
  ["203.0.113.0/24", "documentation"],
  ["224.0.0.0/4", "multicast"],
  ["255.255.255.255/32", "broadcast"],
  ["240.0.0.0/4", "reserved"],
]);

// outside 2000::/3 everything is refused; these name the reason for the well-known blocks
const V6_OUTSIDE = table([
  ["::/128", "unspecified"],
  ["::1/128", "loopback"],
  ["::/96", "ipv4-compatible"],
  ["64:ff9b:1::/48", "nat64 local use"],
  ["100::/64", "discard-only"],
  ["fc00::/7", "unique local"],
  ["fe80::/10", "link-local"],
  ["fec0::/10", "site-local"],
  ["ff00::/8", "multicast"],
]);

// special-purpose blocks inside global unicast
const V6_INSIDE = table([
  ["2001::/32", "teredo"],
  ["2001::/23", "ietf protocol assignment"],
  ["2001:db8::/32", "documentation"],
  ["2002::/16", "6to4"],
  ["3fff::/20", "documentation"],
]);

const GLOBAL_UNICAST = parseCidr("2000::/3") as Cidr;
const NAT64 = parseCidr("64:ff9b::/96") as Cidr;

function v4Verdict(b: Uint8Array, allowPrivate: boolean): Refusal | null {
  const hit = V4.find((r) => cidrContains(r.net, b));
  if (!hit) return null;
  return allowPrivate && PRIVATE_KINDS.has(hit.reason) ? null : hit.reason;
}

function v6Text(b: Uint8Array): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((b[i] << 8) | b[i + 1]).toString(16));
  return groups.join(":");
}

/**
 * Judge one IP address (dotted IPv4 or IPv6 text, no brackets). `allowPrivate` lets private, loopback, CGNAT and
 * unique-local addresses through; nothing else changes.
 */
export function checkAddress(ip: string, opts: { allowPrivate: boolean }): AddressVerdict {
  // a zone id scopes the address to a link: never a destination on the internet
  if (ip.includes("%")) return { ok: false, address: ip, reason: "scoped" };
  const b = isIP(ip) ? ipBytes(ip) : null;
  if (!b) return { ok: false, address: ip, reason: "not an ip address" };
  // IPv4-mapped IPv6 arrives here folded to its 4 IPv4 bytes, and is dialled as IPv4
  if (b.length === 4) {
    const address = Array.from(b).join(".");
    const reason = v4Verdict(b, opts.allowPrivate);
    return reason ? { ok: false, address, reason } : { ok: true, address };
  }
  const address = v6Text(b);
  if (cidrContains(NAT64, b)) {
    // NAT64 reaches the IPv4 address in its last 32 bits: that address decides
    const reason = v4Verdict(b.subarray(12), opts.allowPrivate);
    return reason ? { ok: false, address, reason } : { ok: true, address };
  }
  if (!cidrContains(GLOBAL_UNICAST, b)) {
    const reason = V6_OUTSIDE.find((r) => cidrContains(r.net, b))?.reason ?? "not global unicast";
    return opts.allowPrivate && PRIVATE_KINDS.has(reason) ? { ok: true, address } : { ok: false, address, reason };
  }
  const inside = V6_INSIDE.find((r) => cidrContains(r.net, b));
  return inside ? { ok: false, address, reason: inside.reason } : { ok: true, address };
}

/** The host of a parsed URL as an IP literal (brackets removed), or null when it is a name. */
export function literalHost(url: URL): string | null {
  const h = url.hostname;
  if (h.startsWith("[") && h.endsWith("]")) return h.slice(1, -1);
  return isIP(h) === 4 ? h : null;
}
