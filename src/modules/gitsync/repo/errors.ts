/**
 * The one error type of the git repository layer: a stable code for the worker and a message worded for a user (it is
 * shown in `git status` and on the Git Sync page), never holding a credential, a local path or raw stderr.
 */

/** What went wrong, for callers that branch on it. */
export type GitSyncErrorCode =
  | "auth_failed"
  | "not_found"
  | "unreachable"
  | "tls"
  | "host_key"
  | "timeout"
  | "non_fast_forward"
  | "remote_not_empty"
  | "unsupported_remote"
  | "not_allowed"
  | "failed";

/** A git sync failure with a user-facing message. `detail` is for the process log only (already credential-free). */
export class GitSyncError extends Error {
  constructor(
    readonly code: GitSyncErrorCode,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
    this.name = "GitSyncError";
  }
}

/** Remove anything that looks like credentials in a URL (`https://user:secret@host` -> `https://host`). */
export function scrubUrls(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/gi, "$1");
}

const TLS_CODES = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "ERR_SSL_WRONG_VERSION_NUMBER",
  "EPROTO",
]);

const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
  "EPIPE",
  "ConnectionRefused",
  "ConnectionClosed",
]);

/** Map an isomorphic-git or socket error from an HTTP(S) remote to a GitSyncError; `where` is the host shown. */
export function httpError(e: unknown, where: string): GitSyncError {
  if (e instanceof GitSyncError) return e;
  const err = e as { code?: string; message?: string; data?: { statusCode?: number; reason?: string } };
  const code = err.code ?? "";
  const detail = scrubUrls(`${code} ${err.message ?? String(e)}`.trim());
  const status = err.data?.statusCode;
  if (code === "PushRejectedError" && err.data?.reason === "not-fast-forward") return nonFastForward(detail);
  if (code === "UserCanceledError" || status === 401 || status === 403)
    return new GitSyncError(
      "auth_failed",
      `the remote ${where} refused the credentials (check https_username and https_token)`,
      detail,
    );
  if (status === 404) return new GitSyncError("not_found", `no git repository at the remote ${where}`, detail);
  if (TLS_CODES.has(code) || /certificate|self.signed|tls|ssl/i.test(err.message ?? ""))
    return new GitSyncError("tls", `the TLS certificate of ${where} is not trusted (${tlsReason(code, err.message)})`, detail);
  if (UNREACHABLE_CODES.has(code)) return new GitSyncError("unreachable", `cannot reach ${where} (${netReason(code)})`, detail);
  if (status) return new GitSyncError("failed", `the remote ${where} answered HTTP ${status}`, detail);
  if (code === "SmartHttpError" || code === "ParseError" || code === "UnknownTransportError")
    return new GitSyncError("failed", `${where} does not speak the git smart HTTP protocol`, detail);
  return new GitSyncError("failed", `git operation with ${where} failed`, detail);
}

/** The push was refused because the remote has commits the local branch does not. */
export function nonFastForward(detail?: string): GitSyncError {
  return new GitSyncError(
    "non_fast_forward",
    "the remote has commits this server does not have (not a fast-forward): fetch and apply them first",
    detail,
  );
}

function tlsReason(code: string, message = ""): string {
  if (code === "CERT_HAS_EXPIRED") return "expired";
  if (code === "CERT_NOT_YET_VALID") return "not yet valid";
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID" || /altname|hostname/i.test(message)) return "issued for another name";
  if (code === "DEPTH_ZERO_SELF_SIGNED_CERT" || code === "SELF_SIGNED_CERT_IN_CHAIN" || /self.signed/i.test(message))
    return "self-signed";
  if (code === "ERR_SSL_WRONG_VERSION_NUMBER" || code === "EPROTO") return "TLS handshake failed";
  return "unknown issuer";
}

function netReason(code: string): string {
  if (code === "ECONNREFUSED" || code === "ConnectionRefused") return "connection refused";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "host name not found";
  if (code === "ETIMEDOUT") return "timed out";
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH") return "no route to host";
  return "connection lost";
}

/** Map the stderr of a failed system `git` talking over SSH to a GitSyncError. */
export function sshError(stderr: string, where: string): GitSyncError {
  const detail = scrubUrls(stderr.trim().split("\n").slice(-6).join(" | "));
  const s = stderr;
  if (/REMOTE HOST IDENTIFICATION HAS CHANGED|Host key verification failed|host key .* (has changed|mismatch)/i.test(s))
    return new GitSyncError(
      "host_key",
      `the SSH host key of ${where} does not match the one recorded at first contact (remove it from the known_hosts file only if the change is expected)`,
      detail,
    );
  if (/Permission denied|Too many authentication failures|no such identity|invalid format|bad permissions/i.test(s))
    return new GitSyncError("auth_failed", `the remote ${where} refused the SSH key (check ssh_key_path)`, detail);
  if (/Could not resolve hostname/i.test(s))
    return new GitSyncError("unreachable", `cannot reach ${where} (host name not found)`, detail);
  if (/Connection refused/i.test(s)) return new GitSyncError("unreachable", `cannot reach ${where} (connection refused)`, detail);
  if (/timed out/i.test(s)) return new GitSyncError("unreachable", `cannot reach ${where} (timed out)`, detail);
  if (/No route to host|Network is unreachable/i.test(s))
    return new GitSyncError("unreachable", `cannot reach ${where} (no route to host)`, detail);
  if (/Connection closed|Connection reset|kex_exchange_identification/i.test(s))
    return new GitSyncError("unreachable", `cannot reach ${where} (connection lost)`, detail);
  if (/does not appear to be a git repository|not a git repository|repository .* not found|No such file or directory/i.test(s))
    return new GitSyncError("not_found", `no git repository at the remote ${where}`, detail);
  if (/\[rejected\]|non-fast-forward|fetch first/i.test(s)) return nonFastForward(detail);
  return new GitSyncError("failed", `git operation with ${where} failed`, detail);
}
