/**
 * The ACME challenge board: HTTP-01 key authorizations the plain listener answers and TLS-ALPN-01 certificates the
 * TLS listener presents. Publishing an ALPN certificate waits until our own listener really serves it, so the CA is
 * only asked to validate once a validator would see it.
 */
import { X509Certificate } from "node:crypto";
import { connect } from "node:tls";
import type { AlpnChallenge } from "../types";
import type { ChallengeBoard } from "./acme";
import type { KeyPair } from "./store";

/** Where the TLS listener can be reached from this process. */
export type ProbeTarget = () => { host: string; port: number } | null | undefined;

export interface Board extends ChallengeBoard {
  http01(token: string): string | null;
  alpnChallenges(): AlpnChallenge[];
}

/** A board that calls `changed` whenever the ALPN challenges change. */
export function createBoard(opts: { changed: () => void; probe?: ProbeTarget; probeTimeoutMs?: number }): Board {
  const tokens = new Map<string, string>();
  const alpn = new Map<string, AlpnChallenge>();
  let list: AlpnChallenge[] = [];
  const update = () => {
    list = [...alpn.values()];
    opts.changed();
  };
  return {
    http01: (token) => tokens.get(token) ?? null,
    alpnChallenges: () => list,
    setHttp01: (token, keyAuthorization) => void tokens.set(token, keyAuthorization),
    clearHttp01: (token) => void tokens.delete(token),
    async setAlpn(host: string, pair: KeyPair) {
      alpn.set(host, { host, key: pair.key, cert: pair.cert });
      update();
      const target = opts.probe?.();
      if (!target) return;
      const want = new X509Certificate(pair.cert).fingerprint256;
      const end = Date.now() + (opts.probeTimeoutMs ?? 15_000);
      for (;;) {
        const seen = await probeAlpn(target.host, target.port, host).catch(() => null);
        if (seen?.alpn === "acme-tls/1" && seen.fingerprint === want) return;
        if (Date.now() > end) throw new Error("the tls listener did not present the tls-alpn-01 certificate");
        await Bun.sleep(25);
      }
    },
    clearAlpn(host) {
      if (alpn.delete(host)) update();
    },
  };
}

/** Connect like a TLS-ALPN-01 validator (SNI `serverName`, ALPN acme-tls/1) and report what was served. */
export function probeAlpn(host: string, port: number, serverName: string): Promise<{ alpn: string | null; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host, port, servername: serverName, ALPNProtocols: ["acme-tls/1"], rejectUnauthorized: false });
    const timer = setTimeout(() => sock.destroy(new Error("probe timed out")), 3000);
    sock.once("secureConnect", () => {
      const cert = sock.getPeerCertificate();
      const alpnProtocol = typeof sock.alpnProtocol === "string" ? sock.alpnProtocol : null;
      clearTimeout(timer);
      sock.destroy();
      resolve({ alpn: alpnProtocol, fingerprint: String(cert?.fingerprint256 ?? "").toUpperCase() });
    });
    sock.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}
