/**
 * ACME issuance with acme-client (loaded on first use): the persisted account key, one order per host answered through
 * HTTP-01 or TLS-ALPN-01 (RFC 8737), and the schedule around it (renewal point, retry backoff).
 */
import { rootCertificates } from "node:tls";
import type { Log } from "../../log/logger";
import { makeAlpnCertificate } from "./local-ca";
import type { CertStore, KeyPair } from "./store";

/** Let's Encrypt production, the default directory. */
export const LETS_ENCRYPT_DIRECTORY = "https://acme-v02.api.letsencrypt.org/directory";

export type ChallengeType = "http-01" | "tls-alpn-01";

const MINUTE = 60_000;
const DAY = 86_400_000;
/** First retry after a failed order; doubles up to BACKOFF_MAX_MS. */
export const BACKOFF_MIN_MS = MINUTE;
export const BACKOFF_MAX_MS = 6 * 60 * MINUTE;
/** One order (all its round trips and validations) gives up after this long. */
const ORDER_DEADLINE_MS = 5 * MINUTE;

/**
 * When to renew a certificate: at 2/3 of its lifetime or 30 days before it expires, whichever comes first. For a
 * short-lived certificate "30 days before" would fall in its first half (or before it was issued), so only 2/3 applies.
 */
export function renewAt(meta: { notBefore: number; notAfter: number }): number {
  const life = meta.notAfter - meta.notBefore;
  const twoThirds = meta.notBefore + (life * 2) / 3;
  const monthBefore = meta.notAfter - 30 * DAY;
  return monthBefore >= meta.notBefore + life / 2 ? Math.min(twoThirds, monthBefore) : twoThirds;
}

/** The wait before retry number `failures` (1 = after the first failure): 1 min, doubling, at most 6 h. */
export function backoffDelay(failures: number): number {
  return Math.min(BACKOFF_MIN_MS * 2 ** Math.max(0, failures - 1), BACKOFF_MAX_MS);
}

/** Where challenge answers are published for the listeners. */
export interface ChallengeBoard {
  setHttp01(token: string, keyAuthorization: string): void;
  clearHttp01(token: string): void;
  /** Present `pair` to TLS-ALPN-01 validators of `host`; resolves once the TLS listener serves it. */
  setAlpn(host: string, pair: KeyPair): Promise<void>;
  clearAlpn(host: string): void;
}

export interface AcmeOptions {
  store: CertStore;
  log: Log;
  /** Account contact (tls.email). */
  email: string;
  directoryUrl?: string;
  /** Extra CA (PEM) trusted for the directory's HTTPS, for test CAs such as pebble. */
  caTrust?: string;
  board: ChallengeBoard;
}

/** Obtains certificates from an ACME CA. */
export interface AcmeIssuer {
  readonly directoryUrl: string;
  /** Order a certificate for `host`, trying the challenge types in order; persists and returns it. */
  issue(host: string, types: readonly ChallengeType[]): Promise<KeyPair>;
}

type AcmeModule = typeof import("acme-client");
type AcmeClient = import("acme-client").Client;

/** An issuer bound to one directory and the persisted account key. */
export function createAcmeIssuer(opts: AcmeOptions): AcmeIssuer {
  const directoryUrl = opts.directoryUrl ?? LETS_ENCRYPT_DIRECTORY;
  const log = opts.log;
  let account: Promise<{ acme: AcmeModule; client: AcmeClient }> | undefined;

  const connect = async () => {
    const mod = await import("acme-client");
    const acme = ((mod as any).default ?? mod) as AcmeModule;
    acme.setLogger((msg) => log.debug(msg));
    // a CA that never answers must not leave an order pending forever
    acme.axios.defaults.timeout = 30_000;
    if (opts.caTrust) {
      const { Agent } = await import("node:https");
      acme.axios.defaults.httpsAgent = new Agent({ ca: [...rootCertificates, opts.caTrust] });
    }
    let key = opts.store.readAccountKey();
    if (!key) {
      key = (await acme.crypto.createPrivateEcdsaKey()).toString();
      opts.store.writeAccountKey(key);
      log.info("acme account key created");
    }
    // poll validations from 0.5 s (doubling to 30 s): a challenge stays published only as long as needed
    const client = new acme.Client({ directoryUrl, accountKey: key, backoffAttempts: 12, backoffMin: 500, backoffMax: 30_000 });
    await client.createAccount({ termsOfServiceAgreed: true, contact: opts.email ? [`mailto:${opts.email}`] : undefined });
    log.info("acme account ready", { directory: directoryUrl });
    return { acme, client };
  };
  const ready = () => {
    account ??= connect().catch((e) => {
      account = undefined;
      throw e;
    });
    return account;
  };

  const order = async (host: string, type: ChallengeType): Promise<KeyPair> => {
    const { acme, client } = await ready();
    const o = await client.createOrder({ identifiers: [{ type: "dns", value: host }] });
    for (const authz of await client.getAuthorizations(o)) {
      if (authz.status === "valid") continue;
      const challenge = authz.challenges.find((c) => c.type === type);
      if (!challenge) throw new Error(`the CA offered no ${type} challenge`);
      const keyAuth = await client.getChallengeKeyAuthorization(challenge);
      try {
        if (type === "http-01") opts.board.setHttp01(challenge.token, keyAuth);
        else {
          await opts.board.setAlpn(host, await makeAlpnCertificate(host, keyAuth));
        }
        await client.completeChallenge(challenge);
        await client.waitForValidStatus(challenge);
      } finally {
        if (type === "http-01") opts.board.clearHttp01(challenge.token);
        else opts.board.clearAlpn(host);
      }
    }
    const certKey = await acme.crypto.createPrivateEcdsaKey();
    const [, csr] = await acme.crypto.createCsr({ commonName: host.length <= 64 ? host : undefined, altNames: [host] }, certKey);
    const finalized = await client.finalizeOrder(o, csr);
    const cert = await client.getCertificate(finalized);
    const pair = { cert, key: certKey.toString() };
    opts.store.writeAcme(host, pair);
    return pair;
  };

  return {
    directoryUrl,
    async issue(host, types) {
      if (host.startsWith("*.")) {
        throw new Error("wildcard names need the dns-01 challenge, which sundeck does not answer; upload a custom certificate");
      }
      let last: unknown = new Error("no challenge type enabled");
      for (const type of types) {
        const started = Date.now();
        try {
          const pair = await withDeadline(order(host, type), ORDER_DEADLINE_MS, `${type} order timed out`);
          log.info("certificate issued", { host, challenge: type, ms: Date.now() - started });
          return pair;
        } catch (e) {
          last = e;
          log.warn("acme order failed", { host, challenge: type, error: errorText(e) });
        }
      }
      throw last;
    },
  };
}

/** A short one-line reason from an acme-client or network error. */
export function errorText(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  return msg.replace(/\s+/g, " ").slice(0, 300);
}

function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(what)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
