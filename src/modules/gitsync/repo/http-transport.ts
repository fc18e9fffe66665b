/**
 * HTTP(S) remotes, all through our own bounded clients: refs and fetches by upload-pack (fetch-pack.ts), pushes by
 * receive-pack (send-pack.ts). The token goes in an Authorization header only, never into a URL or .git/config.
 */
import { GitSyncError, httpError } from "./errors";
import { type Fetched, fetchBranch, listed, type UploadPackConnection } from "./fetch-pack";
import { httpCall } from "./http-client";
import { gitFs as fs, loadGit, type RepoPaths } from "./igit";
import { DEFAULT_LIMITS, type Deadline, deadline as deadlineOf, type GitLimits } from "./limits";
import { PktReader } from "./pkt-line";
import type { RemoteSpec } from "./remote";
import { buildPack, objectsToSend, pushRequest, readReport } from "./send-pack";
import type { RemoteAuth, RemoteRef, Transport } from "./transport";
import { readAdvertisement } from "./upload-pack";

/** What a receive-pack report may take (a line per ref). */
const MAX_REPORT = 1024 * 1024;

/** One exchange with `service` over smart HTTP (two requests: the advertisement, then the request). */
function httpConnection(
  remote: RemoteSpec,
  authorization: string | null,
  limits: GitLimits,
  deadline: Deadline,
  service: "git-upload-pack" | "git-receive-pack" = "git-upload-pack",
): UploadPackConnection {
  const base = remote.url.replace(/\/+$/, "");
  const where = remote.where;
  const headers = (extra: Record<string, string>) => ({
    "user-agent": "git/sundeck",
    ...(authorization ? { authorization } : {}),
    ...extra,
  });
  const ok = (r: { status: number; statusText: string }) => {
    if (r.status !== 200) throw httpError({ data: { statusCode: r.status }, message: r.statusText }, where);
  };
  return {
    async advertisement(want) {
      const r = await httpCall({
        url: `${base}/info/refs?service=${service}`,
        headers: headers({}),
        timeoutMs: deadline.left(),
        // streamed and kept only in part (readAdvertisement): bounded like a pack
        maxBytes: limits.maxPackBytes,
        where,
      });
      ok(r);
      if (r.headers.get("content-type") !== `application/x-${service}-advertisement`)
        throw new GitSyncError("failed", `${where} does not speak the git smart HTTP protocol`);
      return readAdvertisement(new PktReader(r.body, where), where, true, service, want);
    },
    async request(body) {
      const r = await httpCall({
        url: `${base}/${service}`,
        method: "POST",
        headers: headers({ "content-type": `application/x-${service}-request`, accept: `application/x-${service}-result` }),
        body,
        timeoutMs: deadline.left(),
        // a fetch's pack is capped while it is received; this bounds what else could come
        maxBytes: service === "git-upload-pack" ? limits.maxPackBytes + 1024 * 1024 : MAX_REPORT,
        where,
      });
      ok(r);
      return new PktReader(r.body, where);
    },
    close() {},
  };
}

/** A Transport for an `http://` or `https://` remote. */
export function httpTransport(
  paths: RepoPaths,
  remote: RemoteSpec,
  auth: RemoteAuth,
  timeoutMs: number,
  limits: GitLimits = DEFAULT_LIMITS,
): Transport {
  const where = remote.where;
  const creds =
    auth.kind === "token"
      ? { username: auth.username || "x-access-token", password: auth.token }
      : remote.userinfo
        ? { username: remote.userinfo.username || "x-access-token", password: remote.userinfo.password }
        : null;
  const authorization = creds ? `Basic ${Buffer.from(`${creds.username}:${creds.password}`).toString("base64")}` : null;
  const expired = (what: string) =>
    new GitSyncError("timeout", `${where} did not finish ${what} within ${Math.round(timeoutMs / 1000)} s`);
  const connect = (d: Deadline) => httpConnection(remote, authorization, limits, d);
  const fail = (e: unknown) => {
    const err = httpError(e, where);
    if (err.code === "auth_failed" && !creds)
      return new GitSyncError(
        "auth_failed",
        `the remote ${where} asks for credentials and none are set (https_token)`,
        err.detail,
      );
    return err;
  };

  return {
    async listRefs(want?: string): Promise<RemoteRef[]> {
      const conn = connect(deadlineOf(timeoutMs, expired));
      try {
        return listed(await conn.advertisement(want));
      } catch (e) {
        throw fail(e);
      } finally {
        conn.close();
      }
    },

    async fetch(branch: string, d?: Deadline): Promise<Fetched> {
      const dl = d ?? deadlineOf(timeoutMs, expired);
      try {
        return await fetchBranch(connect(dl), { gitdir: paths.gitdir, branch, limits, deadline: dl, where });
      } catch (e) {
        throw fail(e);
      }
    },

    async push(branch: string, within?: Deadline): Promise<void> {
      const git = await loadGit();
      const ref = `refs/heads/${branch}`;
      const local = await git.resolveRef({ fs, gitdir: paths.gitdir, ref }).catch(() => null);
      if (!local) return;
      const d = within ?? deadlineOf(timeoutMs, expired);
      const conn = httpConnection(remote, authorization, limits, d, "git-receive-pack");
      try {
        const adv = await conn.advertisement(ref);
        const theirs = adv.refs.find((r) => r.ref === ref)?.oid ?? null;
        if (theirs === local) return;
        const pack = await buildPack(paths.gitdir, await objectsToSend(paths.gitdir, local, theirs, limits, d), limits);
        const reader = await conn.request(pushRequest(ref, theirs, local, pack, adv.caps));
        await readReport(reader, ref, where, adv.caps.has("side-band-64k"));
      } catch (e) {
        throw fail(e);
      } finally {
        conn.close();
      }
    },
  };
}
