/**
 * The client half of git's upload-pack protocol (v0, as smart HTTP and SSH both speak it): read the ref
 * advertisement, ask for one branch with what we have, and receive the pack through side-band into a file, capped in
 * size and time and checked against its trailer. Nothing here holds the pack in memory or trusts a length it sent.
 */
import { closeSync, openSync, rmSync, writeSync } from "node:fs";
import { GitSyncError } from "./errors";
import type { Deadline } from "./limits";
import { FLUSH, type PktReader, pkt, pktText, shownText } from "./pkt-line";
import type { RemoteRef } from "./transport";

const OID = /^[0-9a-f]{40}$/;
/** Refs an advertisement's reader keeps besides the one it is asked for (a remote may list millions). */
export const MAX_KEPT_REFS = 1000;
/** Haves sent in one request (the branch tips and their recent ancestors are enough for a config repository). */
export const MAX_HAVES = 256;
/** Progress and error text kept from band 2 and 3. */
const MAX_MESSAGE = 2048;

/** What the remote advertised: the refs kept (see readAdvertisement), how many it listed, its capabilities. */
export interface Advertisement {
  refs: RemoteRef[];
  total: number;
  caps: Set<string>;
}

const malformed = (where: string, why: string) =>
  new GitSyncError("failed", `the remote ${where} sent a malformed answer (${why})`);

/**
 * Read a ref advertisement (upload-pack's, or receive-pack's before a push); `smartHttp` expects the
 * `# service=<service>` preamble first. It is read to its end as it streams, but only `want` (when given) and the
 * first MAX_KEPT_REFS refs are kept: a remote flooded with branches costs time under the deadline, never memory,
 * and never hides the branch we sync.
 */
export async function readAdvertisement(
  r: PktReader,
  where: string,
  smartHttp: boolean,
  service = "git-upload-pack",
  want?: string,
): Promise<Advertisement> {
  if (smartHttp) {
    const first = await r.next();
    if (!first || pktText(first) !== `# service=${service}`)
      throw new GitSyncError("failed", `${where} does not speak the git smart HTTP protocol`);
    // the preamble ends with a flush
    if ((await r.next()) !== null) throw malformed(where, "no flush after the service line");
  }
  const refs: RemoteRef[] = [];
  let total = 0;
  let caps = new Set<string>();
  for (let i = 0; ; i++) {
    const p = await r.next();
    if (p === undefined) throw malformed(where, "the ref list did not end");
    if (p === null) break;
    let text = pktText(p);
    if (i === 0) {
      const nul = text.indexOf("\0");
      if (nul >= 0) {
        caps = new Set(
          text
            .slice(nul + 1)
            .split(" ")
            .filter(Boolean),
        );
        text = text.slice(0, nul);
      }
    }
    if (text.startsWith("ERR ")) throw new GitSyncError("failed", `the remote ${where} said: ${shownText(text.slice(4))}`);
    const sp = text.indexOf(" ");
    const oid = text.slice(0, sp);
    const ref = text.slice(sp + 1);
    if (!OID.test(oid)) throw malformed(where, "a ref without a sha-1 (sha-256 repositories are not supported)");
    // an empty repository advertises only its capabilities
    if (ref === "capabilities^{}") continue;
    total++;
    if (ref === want || refs.length < MAX_KEPT_REFS) refs.push({ oid, ref });
    // a flood's lines are garbage at once: collect as it goes rather than when a big heap's GC gets to it
    else if (total % 20_000 === 0) Bun.gc(false);
  }
  return { refs, total, caps };
}

/** The request for `want`, telling what we have; the capabilities we use, among those offered. */
export function wantRequest(want: string, haves: string[], offered: Set<string>, where: string): Uint8Array {
  const band = offered.has("side-band-64k") ? "side-band-64k" : offered.has("side-band") ? "side-band" : null;
  if (!band) throw new GitSyncError("failed", `the remote ${where} does not offer side-band (too old a git server)`);
  // never thin-pack: every delta base is in the pack or already ours, never an object we would have to trust
  const caps = [band, ...(offered.has("ofs-delta") ? ["ofs-delta"] : []), "no-progress", "agent=sundeck"];
  const parts = [pkt(`want ${want} ${caps.join(" ")}\n`), FLUSH];
  for (const h of haves.slice(0, MAX_HAVES)) parts.push(pkt(`have ${h}\n`));
  parts.push(pkt("done\n"));
  return Buffer.concat(parts);
}

/** Where a received pack lands, with its size and whether its trailer matched. */
export interface ReceivedPack {
  path: string;
  bytes: number;
}

/**
 * Read the answer to a want request: ACK/NAK lines, then the pack on band 1 into `path`. Refused when it passes
 * `maxBytes`, when the deadline passes, on a band-3 error, or when the pack's trailer is not the SHA-1 of its bytes.
 */
export async function receivePack(
  r: PktReader,
  path: string,
  o: { where: string; maxBytes: number; deadline: Deadline },
): Promise<ReceivedPack> {
  const fd = openSync(path, "wx", 0o600);
  const hash = new Bun.CryptoHasher("sha1");
  let held = new Uint8Array(0);
  let bytes = 0;
  let ok = false;
  try {
    for (;;) {
      o.deadline.check("receiving the pack");
      const p = await r.next();
      if (p === undefined || p === null) break;
      const band = p[0];
      if (band === 1) {
        bytes += p.length - 1;
        if (bytes > o.maxBytes)
          throw new GitSyncError(
            "failed",
            `the remote ${o.where} sent more than ${mib(o.maxBytes)} of objects (git_sync.max_pack_bytes): nothing was applied`,
          );
        const data = p.subarray(1);
        writeSync(fd, data);
        // the trailer is the SHA-1 of everything before it: hash all but the last 20 bytes seen so far
        const all = held.length ? Buffer.concat([held, data]) : data;
        const cut = Math.max(0, all.length - 20);
        hash.update(all.subarray(0, cut));
        held = all.slice(cut);
      } else if (band === 2) {
        // progress: no-progress was asked for; a server may send some anyway
      } else if (band === 3) {
        const text = new TextDecoder().decode(p.subarray(1, MAX_MESSAGE)).trim();
        throw new GitSyncError("failed", `the remote ${o.where} said: ${shownText(text)}`);
      } else {
        const text = pktText(p);
        if (text.startsWith("ACK ") || text === "NAK" || text.startsWith("shallow ")) continue;
        if (text.startsWith("ERR ")) throw new GitSyncError("failed", `the remote ${o.where} said: ${shownText(text.slice(4))}`);
        throw malformed(o.where, "an unexpected line before the pack");
      }
    }
    if (bytes < 32) throw malformed(o.where, "no pack");
    if (Buffer.compare(Buffer.from(hash.digest()), Buffer.from(held)) !== 0)
      throw malformed(o.where, "the pack's checksum does not match its content");
    ok = true;
    return { path, bytes };
  } finally {
    closeSync(fd);
    await r.cancel().catch(() => {});
    if (!ok) rmSync(path, { force: true });
  }
}

function mib(n: number): string {
  return `${Math.round((n / 1024 / 1024) * 10) / 10} MiB`;
}
