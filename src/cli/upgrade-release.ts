/**
 * What `sundeck upgrade` downloads: where releases are, which file fits this machine, and the download itself,
 * verified against the release's SHA256SUMS before it is ever made executable.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { CliError } from "./errors";

/** The release file name this binary was built as (scripts/lib/compile.ts), "" for a host build. */
declare const SUNDECK_TARGET: string | undefined;

/** The release file for this machine: the baked-in target, else detected (arch, and musl when glibc is absent). */
export function releaseFileName(): string {
  const baked = typeof SUNDECK_TARGET === "string" ? SUNDECK_TARGET : "";
  if (baked) return `sundeck-${baked}`;
  const arch = process.arch === "arm64" ? "arm64" : process.arch === "x64" ? "x64" : null;
  if (!arch) throw new CliError(`no sundeck release for ${process.arch}`);
  const musl =
    existsSync(`/lib/ld-musl-${arch === "x64" ? "x86_64" : "aarch64"}.so.1`) &&
    !existsSync("/lib64/ld-linux-x86-64.so.2") &&
    !existsSync("/lib/ld-linux-aarch64.so.1");
  return `sundeck-linux-${arch}${musl ? "-musl" : ""}`;
}

/**
 * Where releases come from: --base-url, SUNDECK_INSTALL_BASE_URL, or what install.sh recorded next to the config
 * (install-source); with a version, its files are under <base>/v<version>/.
 */
export function releaseUrl(opts: { baseUrl?: string; version?: string; configPath: string }): string {
  let base = opts.baseUrl || process.env.SUNDECK_INSTALL_BASE_URL || "";
  const recorded = join(dirname(opts.configPath), "install-source");
  if (!base && existsSync(recorded)) base = readFileSync(recorded, "utf8").trim();
  if (!base) throw new CliError("no release location: pass --base-url URL or set SUNDECK_INSTALL_BASE_URL");
  if (!/^https?:\/\//.test(base)) throw new CliError(`release location ${base} is not an http(s) URL`);
  base = base.replace(/\/+$/, "");
  return opts.version ? `${base}/v${opts.version.replace(/^v/, "")}` : base;
}

async function get(url: string): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(url, { redirect: "follow", signal: AbortSignal.timeout(300_000) });
  } catch (e) {
    throw new CliError(`download of ${url} failed: ${(e as Error).message}`);
  }
  if (!res.ok || !res.body) throw new CliError(`download of ${url} failed: ${res.status} ${res.statusText}`);
  return res;
}

/** The expected sha256 of `name` in a SHA256SUMS text (sha256sum format, text or binary mode). */
export function expectedSum(sums: string, name: string): string {
  for (const line of sums.split("\n")) {
    const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(line.trim());
    if (m && m[2] === name) return m[1]!;
  }
  throw new CliError(`${name} is not listed in SHA256SUMS`);
}

/** Download `<from>/<name>` to `dest` (mode 0755) after checking it against `<from>/SHA256SUMS`; removed on failure. */
export async function downloadVerified(from: string, name: string, dest: string): Promise<void> {
  const want = expectedSum(await (await get(`${from}/SHA256SUMS`)).text(), name);
  const res = await get(`${from}/${name}`);
  const hash = new Bun.CryptoHasher("sha256");
  // plain fds, closed before the file is ever executed (a writer still open makes exec fail with ETXTBSY)
  const fd = openSync(dest, "w", 0o755);
  try {
    for await (const chunk of res.body!) {
      hash.update(chunk);
      for (let off = 0; off < chunk.length; ) off += writeSync(fd, chunk, off);
    }
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(dest, { force: true });
    throw new CliError(`download of ${from}/${name} failed: ${(e as Error).message}`);
  }
  closeSync(fd);
  const got = hash.digest("hex");
  if (got !== want) {
    rmSync(dest, { force: true });
    throw new CliError(`checksum mismatch for ${name} (expected ${want}, got ${got}): refusing to install it`);
  }
}

/** sha256 of a file on disk. */
export async function fileSum(path: string): Promise<string> {
  const hash = new Bun.CryptoHasher("sha256");
  for await (const chunk of Bun.file(path).stream()) hash.update(chunk);
  return hash.digest("hex");
}
