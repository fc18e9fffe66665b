/**
 * Debian's pebble ACME test CA for integration tests: its HTTPS certificate comes from a CA made with openssl at test
 * time, pebble-challtestsrv answers DNS so every name resolves to 127.0.0.1, and the validation ports point at the
 * listeners under test. Stop it in afterAll.
 */

import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { until } from "./http";
import { opensslCa, opensslCert } from "./tls";
import { tempDir } from "./tmp";

export interface Pebble {
  /** The ACME directory URL. */
  directoryUrl: string;
  /** PEM of the CA that signed pebble's own HTTPS certificate (give it to the ACME client). */
  httpsCa: string;
  /** PEM of pebble's issuing root, fetched from its management port (verify issued certificates with it). */
  root(): Promise<string>;
  /** Certificates pebble issued so far (counted from its log). */
  issued(): number;
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (bound and released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Start pebble validating HTTP-01 on `httpPort` and TLS-ALPN-01 on `tlsPort` of 127.0.0.1. */
export async function startPebble(opts: { httpPort: number; tlsPort: number }): Promise<Pebble> {
  const dir = tempDir("sundeck-pebble-");
  const ca = opensslCa(dir, "Pebble HTTPS Test CA");
  const https = opensslCert(dir, { sans: ["localhost", "IP:127.0.0.1"], ca });
  // the kernel may hand a just-released port out again: ask until the four are distinct
  const ports = new Set<number>();
  while (ports.size < 4) ports.add(await freePort());
  const [acmePort, mgmtPort, dnsPort, chalMgmtPort] = [...ports];
  const config = {
    pebble: {
      listenAddress: `127.0.0.1:${acmePort}`,
      managementListenAddress: `127.0.0.1:${mgmtPort}`,
      certificate: https.certPath,
      privateKey: https.keyPath,
      httpPort: opts.httpPort,
      tlsPort: opts.tlsPort,
      ocspResponderURL: "",
      externalAccountBindingRequired: false,
    },
  };
  writeFileSync(join(dir, "pebble.json"), JSON.stringify(config));
  const dns = Bun.spawn(
    [
      "pebble-challtestsrv",
      "-defaultIPv4",
      "127.0.0.1",
      "-defaultIPv6",
      "",
      "-dns01",
      `127.0.0.1:${dnsPort}`,
      "-http01",
      "",
      "-https01",
      "",
      "-tlsalpn01",
      "",
      "-management",
      `127.0.0.1:${chalMgmtPort}`,
    ],
    { stdout: "ignore", stderr: "ignore" },
  );
  let log = "";
  const pebble = Bun.spawn(["pebble", "-config", join(dir, "pebble.json"), "-dnsserver", `127.0.0.1:${dnsPort}`], {
    cwd: dir,
    env: { ...process.env, PEBBLE_VA_NOSLEEP: "1", PEBBLE_WFE_NONCEREJECT: "0", PEBBLE_AUTHZREUSE: "0" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const drain = async (s: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    for await (const chunk of s) log += dec.decode(chunk);
  };
  void drain(pebble.stdout);
  void drain(pebble.stderr);
  const directoryUrl = `https://localhost:${acmePort}/dir`;
  try {
    await until(async () => (await fetch(directoryUrl, { tls: { ca: ca.cert } } as RequestInit)).ok, {
      timeout: 10_000,
      what: `pebble on ${acmePort}`,
    });
  } catch (e) {
    pebble.kill();
    dns.kill();
    throw new Error(`${(e as Error).message}\n${log}`);
  }
  return {
    directoryUrl,
    httpsCa: ca.cert,
    root: async () => (await fetch(`https://localhost:${mgmtPort}/roots/0`, { tls: { ca: ca.cert } } as RequestInit)).text(),
    issued: () => (log.match(/Issued certificate serial/g) ?? []).length,
    stop: async () => {
      pebble.kill();
      dns.kill();
      await Promise.all([pebble.exited, dns.exited]);
    },
  };
}
