/**
 * Certificate management: decides per host what to serve (ACME, uploaded, local CA, nothing), runs ACME orders and
 * renewals in the background with backoff, and tells the listeners when the served set changes.
 */
import { badRequest } from "../../lib/errors";
import { systemClock } from "../../lib/time";
import type { AlpnChallenge, SniEntry } from "../types";
import { backoffDelay, type ChallengeType, createAcmeIssuer, errorText, renewAt } from "./acme";
import { createBoard } from "./challenges";
import { nameCovers, validateCustomCert } from "./custom";
import { LOCAL_RENEW_BEFORE_MS, openLocalCa } from "./local-ca";
import type { CertInfo, CertManager, CertManagerOptions, CertStatus, HostSpec } from "./manager-types";
import { type CertMeta, certMeta, isCertHost, type KeyPair } from "./store";

export type { CertInfo, CertManager, CertManagerOptions, CertStatus, HostSpec } from "./manager-types";

interface HostState {
  spec: HostSpec;
  entry: SniEntry | null;
  source: CertInfo["source"];
  meta: CertMeta | null;
  status: CertStatus;
  error: string | null;
  acme: KeyPair | null;
  failures: number;
  nextAttempt: number;
  forced: boolean;
  running: Promise<void> | null;
}

const HOUR = 3_600_000;

/** Open the manager: loads (or creates) the local CA and the fallback certificate. */
export async function createCertManager(opts: CertManagerOptions): Promise<CertManager> {
  const { store, log } = opts;
  const clock = opts.clock ?? systemClock;
  const challenges = opts.challenges ?? ["http-01", "tls-alpn-01"];
  const concurrency = opts.concurrency ?? 2;
  const ca = opts.mode === "off" ? null : await openLocalCa({ store, clock, hostname: opts.hostname });
  let fallbackEntry: SniEntry | null = ca ? { serverName: "", ...(await ca.leaf("localhost")) } : null;

  const listeners = new Set<() => void>();
  let emitQueued = false;
  const emit = () => {
    if (emitQueued) return;
    emitQueued = true;
    queueMicrotask(() => {
      emitQueued = false;
      for (const fn of listeners) {
        try {
          fn();
        } catch (e) {
          log.error("certificate change listener failed", { error: errorText(e) });
        }
      }
    });
  };

  const board = createBoard({ changed: emit, probe: opts.tlsProbe });
  const issuer = createAcmeIssuer({
    store,
    log,
    email: opts.email ?? "",
    directoryUrl: opts.directoryUrl,
    caTrust: opts.caTrust,
    board,
  });

  const hosts = new Map<string, HostState>();
  let custom = store.listCustom();
  let sniList: SniEntry[] = [];
  let sniKey = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;

  const rebuild = () => {
    const list: SniEntry[] = [];
    for (const st of hosts.values()) if (st.entry) list.push(st.entry);
    const key = list.map((e) => `${e.serverName}\n${e.cert}`).join("\n") + (fallbackEntry?.cert ?? "");
    if (key === sniKey) return;
    sniKey = key;
    sniList = list;
    emit();
  };

  const serve = (st: HostState, pair: KeyPair, source: CertInfo["source"]) => {
    st.entry = { serverName: st.spec.host, key: pair.key, cert: pair.cert };
    st.source = source;
    st.meta = certMeta(pair.cert);
  };

  /**
   * An uploaded certificate covering the host: the app's own (exact before wildcard). A host without an app (the
   * management domain) may use any app's upload; an app never serves another app's certificate.
   */
  const findCustom = (host: string, app?: string): KeyPair | null => {
    const candidates = custom.filter((c) => (app === undefined || c.app === app) && nameCovers(c.domain, host));
    candidates.sort((a, b) => rank(a, host) - rank(b, host));
    for (const c of candidates) {
      const pair = store.readCustom(c.app, c.domain);
      if (pair) return pair;
    }
    return null;
  };

  /** Work out what a host serves now (everything but starting ACME orders). */
  const resolve = async (st: HostState) => {
    const { host, tls } = st.spec;
    const now = clock.now();
    st.error = null;
    if (tls === "off" || !ca) {
      Object.assign(st, { entry: null, source: null, meta: null, status: "none" });
      return;
    }
    if (tls === "local") {
      serve(st, await ca.leaf(host), "local");
      st.status = "issued";
      return;
    }
    if (tls === "custom") {
      const pair = findCustom(host, st.spec.app);
      if (pair) {
        serve(st, pair, "custom");
        const expired = st.meta!.notAfter <= now;
        st.status = expired ? "failed" : "issued";
        st.error = expired ? `the certificate expired on ${new Date(st.meta!.notAfter).toISOString()}` : null;
        return;
      }
      serve(st, await ca.leaf(host), "fallback");
      st.status = "pending";
      st.error = "no certificate uploaded";
      return;
    }
    st.acme ??= store.readAcme(host);
    const meta = st.acme ? safeMeta(st.acme.cert) : null;
    if (st.acme && meta && meta.notAfter > now) {
      serve(st, st.acme, "acme");
      st.status = "issued";
      return;
    }
    serve(st, await ca.leaf(host), "fallback");
    st.status = st.failures > 0 ? "failed" : "pending";
  };

  const dueAt = (st: HostState): number | null => {
    if (st.spec.tls === "auto" && ca) {
      if (st.running) return null;
      if (st.forced) return 0;
      if (st.failures > 0) return st.nextAttempt;
      if (st.source !== "acme" || !st.meta) return 0;
      return renewAt(st.meta);
    }
    if ((st.source === "local" || st.source === "fallback") && st.meta) return st.meta.notAfter - LOCAL_RENEW_BEFORE_MS;
    return null;
  };

  const runAcme = (st: HostState): Promise<void> => {
    const host = st.spec.host;
    st.forced = false;
    const run = (async () => {
      if (!opts.email) throw new Error("tls.email is required for automatic certificates");
      const pair = await issuer.issue(host, challenges);
      if (hosts.get(host) !== st) return; // the host went away or changed mode meanwhile
      st.acme = pair;
      st.failures = 0;
      st.nextAttempt = 0;
      await resolve(st);
    })()
      .catch((e) => {
        st.failures++;
        st.nextAttempt = clock.now() + backoffDelay(st.failures);
        st.error = errorText(e);
        if (st.source !== "acme") st.status = "failed";
        log.error("certificate order failed", { host, error: st.error, retry_at: new Date(st.nextAttempt).toISOString() });
        throw e;
      })
      .finally(() => {
        st.running = null;
        rebuild();
        schedule();
      });
    st.running = run.catch(() => undefined);
    return run;
  };

  const refresh = async () => {
    if (stopped) return;
    const now = clock.now();
    const work: Promise<unknown>[] = [];
    let running = [...hosts.values()].filter((s) => s.running).length;
    for (const st of hosts.values()) {
      const due = dueAt(st);
      if (due === null || due > now) continue;
      if (st.spec.tls === "auto") {
        if (running >= concurrency) continue;
        running++;
        void runAcme(st).catch(() => undefined);
      } else {
        work.push(resolve(st).catch((e) => log.error("local certificate failed", { host: st.spec.host, error: errorText(e) })));
      }
    }
    if (ca && fallbackEntry && !ca.isFresh(fallbackEntry, now))
      fallbackEntry = { serverName: "", ...(await ca.leaf("localhost")) };
    await Promise.all(work);
    rebuild();
    schedule();
  };

  const schedule = () => {
    if (stopped) return;
    clearTimeout(timer);
    let next = clock.now() + HOUR;
    for (const st of hosts.values()) {
      const due = dueAt(st);
      if (due !== null) next = Math.min(next, due);
    }
    // an order running elsewhere frees a slot later; its completion reschedules
    const delay = Math.max(1000, next - clock.now());
    timer = setTimeout(() => void refresh(), Math.min(delay, HOUR));
    timer.unref?.();
  };

  return {
    sni: () => sniList,
    fallback: () => {
      if (!fallbackEntry) throw new Error("no fallback certificate: tls mode is off");
      return fallbackEntry;
    },
    onChange(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    http01: (token) => board.http01(token),
    alpnChallenges: (): AlpnChallenge[] => board.alpnChallenges(),

    async setHosts(specs) {
      const seen = new Set<string>();
      const changed: HostState[] = [];
      for (const spec of specs) {
        const host = spec.host.toLowerCase();
        if (seen.has(host)) continue;
        if (!isCertHost(host)) {
          log.warn("host name unusable for certificates", { host });
          continue;
        }
        seen.add(host);
        const old = hosts.get(host);
        if (old && old.spec.tls === spec.tls && old.spec.app === spec.app) continue;
        const st: HostState = {
          spec: { ...spec, host },
          entry: null,
          source: null,
          meta: null,
          status: "pending",
          error: null,
          acme: null,
          failures: 0,
          nextAttempt: 0,
          forced: false,
          running: null,
        };
        hosts.set(host, st);
        changed.push(st);
      }
      for (const host of [...hosts.keys()]) if (!seen.has(host)) hosts.delete(host);
      await Promise.all(
        changed.map((st) =>
          resolve(st).catch((e) => log.error("certificate setup failed", { host: st.spec.host, error: errorText(e) })),
        ),
      );
      rebuild();
      await refresh();
    },

    async putCustom(app, domain, certPem, keyPem) {
      const d = domain.toLowerCase();
      if (!isCertHost(d)) throw badRequest(`${domain} is not a valid domain`);
      const info = validateCustomCert(d, certPem, keyPem, clock.now());
      store.writeCustom(app, d, { cert: certPem.trim() + "\n", key: keyPem.trim() + "\n" });
      custom = store.listCustom();
      await reresolveCustom(d);
      log.info("custom certificate stored", { app, domain: d, not_after: info.notAfter });
      return info;
    },

    async removeCustom(app, domain) {
      const d = domain.toLowerCase();
      if (!isCertHost(d)) return false;
      const removed = store.removeCustom(app, d);
      custom = store.listCustom();
      if (removed) await reresolveCustom(d);
      return removed;
    },

    certInfo(host) {
      const st = hosts.get(host.toLowerCase());
      if (!st) return null;
      const due = st.spec.tls === "auto" ? dueAt(st) : null;
      return {
        host: st.spec.host,
        mode: st.spec.tls,
        status: st.status,
        source: st.source,
        notBefore: st.meta ? new Date(st.meta.notBefore).toISOString() : null,
        notAfter: st.meta ? new Date(st.meta.notAfter).toISOString() : null,
        issuer: st.meta?.issuer ?? null,
        subject: st.meta?.subject ?? null,
        sans: st.meta?.sans ?? null,
        fingerprint: st.meta?.fingerprint ?? null,
        error: st.error,
        nextAttemptAt: due === null ? null : new Date(Math.max(due, clock.now())).toISOString(),
      };
    },

    isPlain: (host) => opts.mode === "off" || hosts.get(host.toLowerCase())?.spec.tls === "off",
    localCa: () => ca,

    async renew(host) {
      const st = hosts.get(host.toLowerCase());
      if (st?.spec.tls !== "auto") throw new Error(`${host} does not use automatic certificates`);
      if (st.running) await st.running;
      await runAcme(st);
    },

    refresh,

    async idle() {
      for (;;) {
        const running = [...hosts.values()].map((s) => s.running).filter(Boolean);
        if (running.length === 0) return;
        await Promise.all(running);
      }
    },

    stop() {
      stopped = true;
      clearTimeout(timer);
      listeners.clear();
    },
  };

  async function reresolveCustom(domain: string) {
    const affected = [...hosts.values()].filter((st) => st.spec.tls === "custom" && nameCovers(domain, st.spec.host));
    await Promise.all(affected.map((st) => resolve(st)));
    rebuild();
  }
}

function rank(c: { domain: string }, host: string): number {
  return c.domain === host ? 0 : 1;
}

function safeMeta(pem: string): CertMeta | null {
  try {
    return certMeta(pem);
  } catch {
    return null;
  }
}

/** The challenge types to use: HTTP-01 first when the plain listener is enabled. */
export function challengeOrder(httpListenAddr: string): ChallengeType[] {
  return httpListenAddr ? ["http-01", "tls-alpn-01"] : ["tls-alpn-01"];
}
