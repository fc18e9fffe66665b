/** The certificate of one host as cells: status badge with the error or note, and the expiry with days left. */
import { formatTime, humanize } from "../../format";
import type { CertInfo } from "../../types";
import { certProblem, expiryLevel, expiryText } from "./endpoints";

const STATUS_TEXT: Record<CertInfo["status"], string> = {
  issued: "issued",
  pending: "pending",
  failed: "failed",
  none: "no TLS",
};

/** The status of a host's certificate. */
export function CertBadge({ status }: { status: CertInfo["status"] }) {
  return (
    <span class={`badge cert cert-${status}`} data-status={status}>
      <span class="sr-only">certificate: </span>
      {STATUS_TEXT[status] ?? humanize(status)}
    </span>
  );
}

/** Status, then the error (failed, expired) or the server's note (a fallback while waiting). */
export function CertCell({ cert }: { cert: CertInfo | undefined }) {
  if (!cert) return <span class="muted">…</span>;
  const problem = certProblem(cert);
  return (
    <div class="cert-cell">
      <CertBadge status={cert.status} />
      {problem ? (
        <span class="error-inline cert-error">{problem}</span>
      ) : (
        cert.error && <span class="muted small">{cert.error}</span>
      )}
    </div>
  );
}

/** The expiry date and days left: a warning under two weeks, an error once expired. */
export function ExpiryCell({ notAfter }: { notAfter: string }) {
  const level = expiryLevel(notAfter);
  return (
    <span class={`expiry expiry-${level}`}>
      <time dateTime={notAfter}>{formatTime(notAfter)}</time> <span class="expiry-left">({expiryText(notAfter)})</span>
    </span>
  );
}
