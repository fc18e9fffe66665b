/**
 * Where a request is addressed (RFC 9112 3.2): the Host header, or the authority of an absolute-form target, which
 * wins over Host. An authority is a host name (letters, digits, `-`, `.`, `_`, `~`: RFC 3986 reg-name without
 * percent-encoding or sub-delims, which no routed host has), an IPv4 address or a bracketed IPv6 literal, with an
 * optional port. Anything else, several Host lines, or userinfo, is refused with 400.
 */
import { ipBytes } from "../../lib/net";
import { FramingError, type RequestHead } from "./framing";

const REG_NAME = /^[A-Za-z0-9._~-]+$/;
const PORT = /^\d{0,5}$/;

/** True when `text` is `host[:port]` as the proxy accepts it. */
export function validAuthority(text: string): boolean {
  let port: string;
  if (text.startsWith("[")) {
    const end = text.indexOf("]");
    if (end < 0) return false;
    const literal = text.slice(1, end);
    if (literal.includes("%") || ipBytes(literal)?.length !== 16) return false;
    const rest = text.slice(end + 1);
    if (rest !== "" && !rest.startsWith(":")) return false;
    port = rest.slice(1);
  } else {
    const colon = text.indexOf(":");
    const host = colon < 0 ? text : text.slice(0, colon);
    if (!REG_NAME.test(host)) return false;
    port = colon < 0 ? "" : text.slice(colon + 1);
  }
  return PORT.test(port) && (port === "" || Number(port) <= 65535);
}

const PLAIN = /^[a-z0-9-]+(\.[a-z0-9-]+)*$/;

/**
 * A valid authority as sent upstream: the host lower-cased without trailing dots, the port as a plain number (an
 * empty port dropped), so an app that builds links from Host never sees `A.TEST.:080`.
 */
export function canonicalAuthority(text: string): string {
  if (PLAIN.test(text)) return text;
  const v6 = text.startsWith("[");
  const colon = v6 ? text.indexOf(":", text.indexOf("]")) : text.indexOf(":");
  let host = (colon < 0 ? text : text.slice(0, colon)).toLowerCase();
  if (!v6) while (host.endsWith(".")) host = host.slice(0, -1);
  const port = colon < 0 ? "" : text.slice(colon + 1);
  return port === "" ? host : `${host}:${Number(port)}`;
}

/** Where a request goes and what to send upstream. */
export interface RequestTarget {
  /** The authority to route by and to send as Host, canonical ("" for an HTTP/1.0 request without one). */
  authority: string;
  /** Origin-form path and query for the upstream. */
  target: string;
  /** The path without the query. */
  path: string;
}

const ABSOLUTE = /^https?:\/\/([^/?]*)(.*)$/i;

/** The authority and origin-form target of `head`; a FramingError (400) when the request is not addressed properly. */
export function requestTarget(head: RequestHead): RequestTarget {
  const hosts = head.headers.all("host");
  if (hosts.length > 1) throw new FramingError(400, "more than one Host header");
  if (hosts.length === 0 && head.minor === 1) throw new FramingError(400, "missing Host header");
  const host = hosts[0] ?? "";
  if (hosts.length === 1 && !validAuthority(host)) throw new FramingError(400, "invalid Host header");
  let authority = host;
  let target = head.target;
  if (!target.startsWith("/")) {
    const m = ABSOLUTE.exec(target);
    if (m === null) throw new FramingError(400, "unsupported request target");
    if (m[1].includes("@")) throw new FramingError(400, "userinfo in the request target");
    if (!validAuthority(m[1])) throw new FramingError(400, "invalid authority in the request target");
    authority = m[1];
    target = m[2].startsWith("/") ? m[2] : `/${m[2]}`;
  }
  const q = target.indexOf("?");
  return { authority: canonicalAuthority(authority), target, path: q < 0 ? target : target.slice(0, q) };
}
