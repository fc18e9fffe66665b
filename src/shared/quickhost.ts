/**
 * The quick-test host of a template deploy: `<slug>.<ip>.sslip.io`, which resolves to `ip` anywhere (an IPv6 address
 * written with dashes). Pure, so the server's routing and the dashboard's wizard show the same name.
 */

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** 4 or 6 for an IP address (IPv6 with or without brackets), 0 for anything else. */
export function ipKind(host: string): 0 | 4 | 6 {
  const h = host.replace(/^\[|\]$/g, "");
  if (IPV4.test(h)) return 4;
  if (!h.includes(":") || !/^[0-9a-fA-F:.]+$/.test(h)) return 0;
  try {
    // the URL parser accepts exactly the IPv6 literals (compressed, embedded IPv4) and nothing else in brackets
    return new URL(`http://[${h}]/`).hostname ? 6 : 0;
  } catch {
    return 0;
  }
}

/** The host, or null when `publicHost` is not an IP address (the quick test needs one). */
export function quickTestHost(slug: string, publicHost: string): string | null {
  const ip = publicHost.replace(/^\[|\]$/g, "");
  const kind = ipKind(ip);
  if (!kind) return null;
  return `${slug}.${kind === 6 ? ip.replace(/:/g, "-") : ip}.sslip.io`;
}
