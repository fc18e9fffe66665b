/**
 * The app's endpoints: each one's hosts as links, target service and port, path prefix and effective TLS mode, and per
 * host the certificate served (status, source, expiry with days left, next attempt, error). Hosts in `custom` mode get
 * an upload form; a link to the trust page appears when visitors see certificates of the local CA. Editors switch the tab
 * to the endpoints editor (EndpointsEditor), which saves them as labels and deploys.
 */
import { useState } from "preact/hooks";
import { api } from "../../api";
import { ErrorText } from "../../components/Field";
import { TrustNote } from "../../components/TrustLink";
import { formatTime, relativeTime } from "../../format";
import { usePolled } from "../../hooks";
import { useSystemInfo } from "../../sysinfo";
import type { AppEndpoint, AppView, CertInfo, TlsMode } from "../../types";
import { CertCell, ExpiryCell } from "./CertState";
import { CertUpload } from "./CertUpload";
import { EndpointsEditor } from "./EndpointsEditor";
import { type EndpointRow, newRow, rowsOf, serviceNames } from "./endpoint-rows";
import { effectiveTls, endpointUrl, modeText, sourceText, usesLocalCa } from "./endpoints";
import type { DeployRun } from "./useDeployRun";

/** Certificates change on their own (orders, renewals): refreshed this often while the tab is visible. */
export const CERTS_POLL_MS = 10_000;

function HostRow({ host, url, cert }: { host: string; url: string | null; cert: CertInfo | undefined }) {
  return (
    <tr>
      <th scope="row">
        {url ? (
          <a href={url} target="_blank" rel="noopener noreferrer">
            {url}
          </a>
        ) : (
          <code>{host}</code>
        )}
      </th>
      <td data-label="Certificate">
        <CertCell cert={cert} />
      </td>
      <td data-label="Source">
        {cert && (
          <div class="cert-cell">
            <span>{sourceText(cert.source)}</span>
            {cert.issuer && <span class="muted small">{cert.issuer}</span>}
            {cert.fingerprint && (
              <details class="small cert-details">
                <summary>Details</summary>
                <dl class="facts">
                  <dt>Subject</dt>
                  <dd>{cert.subject}</dd>
                  <dt>Names</dt>
                  <dd>{cert.sans?.join(", ") || "none"}</dd>
                  <dt>Fingerprint (SHA-256)</dt>
                  <dd>
                    <code class="fingerprint">{cert.fingerprint}</code>
                  </dd>
                </dl>
              </details>
            )}
          </div>
        )}
      </td>
      <td data-label="Expires">{cert?.not_after && <ExpiryCell notAfter={cert.not_after} />}</td>
      <td data-label="Next attempt">
        {cert?.next_attempt_at && (
          <time dateTime={cert.next_attempt_at} title={formatTime(cert.next_attempt_at)}>
            {relativeTime(cert.next_attempt_at)}
          </time>
        )}
      </td>
    </tr>
  );
}

interface EndpointProps {
  slug: string;
  ep: AppEndpoint;
  server: TlsMode;
  certs: Map<string, CertInfo>;
  canEdit: boolean;
  onChanged(): void;
}

function Endpoint({ slug, ep, server, certs, canEdit, onChanged }: EndpointProps) {
  const tls = effectiveTls(ep, server);
  const title = `${ep.hosts[0] ?? ep.service}${ep.path === "/" ? "" : ep.path}`;
  return (
    <section class="card endpoint" aria-label={`Endpoint ${title}`}>
      <div class="card-head">
        <h2>{title}</h2>
        <span class={`badge tls tls-${tls.mode}`}>TLS {tls.mode}</span>
      </div>
      <dl class="facts">
        <dt>Target</dt>
        <dd>
          <code>
            {ep.service}:{ep.port}
          </code>
        </dd>
        <dt>Path</dt>
        <dd>
          <code>{ep.path}</code>
        </dd>
        <dt>TLS mode</dt>
        <dd data-testid="tls-mode">
          {tls.mode}
          {tls.inherited ? " (server default)" : ""}
          <span class="muted"> · {modeText(tls.mode)}</span>
          {server === "off" && ep.tls !== null && ep.tls !== "off" && (
            <span class="muted"> · the server runs without TLS, so the label's {ep.tls} has no effect</span>
          )}
        </dd>
      </dl>
      <div class="table-wrap">
        <table class="table stack hosts">
          <caption class="sr-only">Hosts of {title}</caption>
          <thead>
            <tr>
              <th scope="col">Host</th>
              <th scope="col">Certificate</th>
              <th scope="col">Source</th>
              <th scope="col">Expires</th>
              <th scope="col">Next attempt</th>
            </tr>
          </thead>
          <tbody>
            {ep.hosts.map((h) => (
              <HostRow key={h} host={h} url={endpointUrl(h, ep.path, tls.mode)} cert={certs.get(h)} />
            ))}
          </tbody>
        </table>
      </div>
      {tls.mode === "custom" &&
        canEdit &&
        ep.hosts.map((h) => (
          <CertUpload key={h} slug={slug} domain={h} uploaded={certs.get(h)?.source === "custom"} onChanged={onChanged} />
        ))}
      {tls.mode === "custom" && !canEdit && (
        <p class="muted small">Certificates of these hosts are uploaded by the app's managers.</p>
      )}
    </section>
  );
}

export interface EndpointsTabProps {
  app: AppView;
  canEdit: boolean;
  /** The page's deploy run: the editor's save shows its output there. */
  run: DeployRun;
  busy: boolean;
}

/** The tab. */
export function EndpointsTab({ app, canEdit, run, busy }: EndpointsTabProps) {
  const slug = app.slug;
  const info = useSystemInfo();
  // the rows the editor opened with; null while the tab shows the endpoints
  const [editing, setEditing] = useState<EndpointRow[] | null>(null);
  const editable = canEdit && serviceNames(app).length > 0;
  const hostsKey = app.endpoints.flatMap((e) => e.hosts).join(",");
  const certs = usePolled(() => api.apps.certs(slug), CERTS_POLL_MS, [slug, hostsKey]);
  const server = info.data?.tls_mode;
  const byHost = new Map((certs.data ?? []).map((c) => [c.domain, c]));

  if (editing) {
    return (
      <EndpointsEditor
        app={app}
        run={run}
        busy={busy}
        server={info.data?.tls_mode}
        initial={editing}
        onClose={() => setEditing(null)}
      />
    );
  }

  if (app.endpoints.length === 0) {
    return (
      <section class="card empty-state">
        <h2>No endpoints</h2>
        {editable ? (
          <>
            <p class="muted">The proxy routes nothing to this app. Publish one of its services on a host name.</p>
            <button type="button" class="btn primary" onClick={() => setEditing([newRow(app)])}>
              Add an endpoint
            </button>
          </>
        ) : (
          <p class="muted">
            The proxy routes nothing to this app. Give a service a <code>sundeck.domain</code> label (and{" "}
            <code>sundeck.port</code> when it exposes several ports) to publish it on a host name.
          </p>
        )}
      </section>
    );
  }

  const modes = server ? app.endpoints.map((e) => effectiveTls(e, server).mode) : [];
  return (
    <>
      <ErrorText error={info.error ?? certs.error} />
      {!server && info.loading && <p class="muted">Loading…</p>}
      {server && (
        <div class="endpoints-intro">
          <p class="muted small endpoints-intro-text">
            The server's TLS mode is <strong>{server}</strong> ({modeText(server)}); endpoints without a <code>sundeck.tls</code>{" "}
            label use it. Certificates refresh every {CERTS_POLL_MS / 1000} s.
          </p>
          {editable && (
            <button type="button" class="btn small" onClick={() => setEditing(rowsOf(app.endpoints))}>
              Edit endpoints
            </button>
          )}
        </div>
      )}
      {server && usesLocalCa(modes, certs.data ?? []) && <TrustNote />}
      {server &&
        app.endpoints.map((ep) => (
          <Endpoint
            key={`${ep.service}:${ep.port}:${ep.path}:${ep.hosts.join(",")}`}
            slug={slug}
            ep={ep}
            server={server}
            certs={byHost}
            canEdit={canEdit}
            onChanged={() => void certs.reload()}
          />
        ))}
    </>
  );
}
