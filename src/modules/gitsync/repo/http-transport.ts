/** HTTP(S) remotes through isomorphic-git; the token goes in through onAuth only, never into a URL or .git/config. */
import { GitSyncError, httpError } from "./errors";
import { timedHttp } from "./http-client";
import { gitFs as fs, loadGit, type RepoPaths } from "./igit";
import type { RemoteSpec } from "./remote";
import type { RemoteAuth, RemoteRef, Transport } from "./transport";

/** A Transport for an `http://` or `https://` remote. */
export function httpTransport(paths: RepoPaths, remote: RemoteSpec, auth: RemoteAuth, timeoutMs: number): Transport {
  const where = remote.where;
  const http = timedHttp(timeoutMs, where);
  const creds =
    auth.kind === "token"
      ? { username: auth.username || "x-access-token", password: auth.token }
      : remote.userinfo
        ? { username: remote.userinfo.username || "x-access-token", password: remote.userinfo.password }
        : null;
  // isomorphic-git asks only after a 401; with nothing to offer, cancelling ends it at once
  const onAuth = () => creds ?? { cancel: true };
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
    async listRefs(): Promise<RemoteRef[]> {
      const git = await loadGit();
      try {
        const refs = await git.listServerRefs({ http, url: remote.url, onAuth, protocolVersion: 1 });
        return refs.filter((r) => r.ref !== "HEAD" && !r.ref.endsWith("^{}")).map((r) => ({ ref: r.ref, oid: r.oid }));
      } catch (e) {
        throw fail(e);
      }
    },

    async fetch(branch: string): Promise<string | null> {
      const git = await loadGit();
      const tracking = `refs/remotes/origin/${branch}`;
      try {
        const r = await git.fetch({
          fs,
          http,
          ...paths,
          remote: "origin",
          ref: branch,
          remoteRef: branch,
          singleBranch: true,
          tags: false,
          onAuth,
        });
        if (r.fetchHead) return r.fetchHead;
      } catch (e) {
        if ((e as { code?: string }).code !== "NotFoundError") throw fail(e);
      }
      // the remote has no such branch (an empty remote): forget a tracking ref left from before
      await git.deleteRef({ fs, gitdir: paths.gitdir, ref: tracking }).catch(() => {});
      return null;
    },

    async push(branch: string): Promise<void> {
      const git = await loadGit();
      let res: Awaited<ReturnType<typeof git.push>>;
      try {
        res = await git.push({ fs, http, ...paths, remote: "origin", ref: branch, remoteRef: branch, onAuth });
      } catch (e) {
        throw fail(e);
      }
      const refError = Object.values(res.refs ?? {}).find((r) => !r.ok)?.error;
      if (!res.ok || refError) {
        const why = `${res.error ?? ""} ${refError ?? ""}`.trim();
        if (/fast.forward|fetch first|stale/i.test(why))
          throw httpError({ code: "PushRejectedError", data: { reason: "not-fast-forward" } }, where);
        throw new GitSyncError("failed", `the remote ${where} refused the push (${why.slice(0, 120) || "no reason given"})`);
      }
    },
  };
}
