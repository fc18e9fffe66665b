/**
 * Uploading a custom certificate for one host (PEM chain and key, pasted or read from files), the server's refusal
 * shown as sent, what was stored (expiry, fingerprint), and removing the upload after a confirmation.
 */
import { useId, useState } from "preact/hooks";
import { api } from "../../api";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { ErrorText, TextAreaField } from "../../components/Field";
import { formatTime } from "../../format";
import { useAction } from "../../hooks";
import { toast } from "../../toast";
import type { UploadedCert } from "../../types";
import { expiryText } from "./endpoints";

/** The server refuses bodies over this size (413). */
export const CERT_UPLOAD_LIMIT = 256 * 1024;

/** A file input that reads a small text file into `onText`. */
function FileLoad({ label, onText }: { label: string; onText(text: string): void }) {
  const id = useId();
  return (
    <div class="file-load">
      <label for={id} class="small">
        {label}
      </label>
      <input
        id={id}
        type="file"
        accept=".pem,.crt,.cer,.key,.txt,application/x-pem-file,text/plain"
        onChange={async (e) => {
          const f = e.currentTarget.files?.[0];
          if (f) onText(await f.text());
          e.currentTarget.value = "";
        }}
      />
    </div>
  );
}

function Stored({ cert }: { cert: UploadedCert }) {
  return (
    <div class="notice ok cert-stored" role="status">
      <p>
        Certificate stored for <strong>{cert.domain}</strong>: valid until{" "}
        <time dateTime={cert.not_after}>{formatTime(cert.not_after)}</time> ({expiryText(cert.not_after)}).
      </p>
      <dl class="facts small">
        <dt>Fingerprint (SHA-256)</dt>
        <dd>
          <code class="fingerprint">{cert.fingerprint}</code>
        </dd>
        <dt>Subject</dt>
        <dd>{cert.subject}</dd>
        <dt>Issuer</dt>
        <dd>{cert.issuer}</dd>
        <dt>Names</dt>
        <dd>{cert.sans.join(", ") || "none"}</dd>
      </dl>
    </div>
  );
}

export interface CertUploadProps {
  slug: string;
  domain: string;
  /** An uploaded certificate serves the host now (offer Remove). */
  uploaded: boolean;
  /** After an upload or a removal (reload the certificate state). */
  onChanged(): void;
}

/** The upload form of one host. */
export function CertUpload({ slug, domain, uploaded, onChanged }: CertUploadProps) {
  const [cert, setCert] = useState("");
  const [key, setKey] = useState("");
  const [stored, setStored] = useState<UploadedCert | null>(null);
  const [confirming, setConfirming] = useState(false);
  const upload = useAction(async () => {
    if (cert.length + key.length > CERT_UPLOAD_LIMIT) throw new Error("The certificate and key are over 256 KiB together");
    const result = await api.apps.putCert(slug, domain, cert.trim(), key.trim());
    setStored(result);
    setCert("");
    setKey("");
    onChanged();
  });
  const titleId = useId();

  return (
    <section class="cert-upload" aria-labelledby={titleId}>
      <h4 id={titleId}>
        {uploaded ? "Replace the certificate" : "Upload a certificate"} for {domain}
      </h4>
      <form
        aria-label={`Certificate for ${domain}`}
        onSubmit={async (e) => {
          e.preventDefault();
          setStored(null);
          if (await upload.run()) toast(`Certificate for ${domain} stored`);
        }}
      >
        <div class="cert-fields">
          <div>
            <TextAreaField
              label="Certificate (PEM)"
              class="compact"
              rows={6}
              required
              placeholder="-----BEGIN CERTIFICATE-----"
              value={cert}
              onValue={setCert}
              hint="The chain, the certificate for this host first, then its intermediates."
            />
            <FileLoad label="Read the certificate from a file" onText={setCert} />
          </div>
          <div>
            <TextAreaField
              label="Private key (PEM)"
              class="compact"
              rows={6}
              required
              placeholder="-----BEGIN PRIVATE KEY-----"
              value={key}
              onValue={setKey}
              hint="Unencrypted. Stored on the server readable by Sundeck only, never shown again."
            />
            <FileLoad label="Read the key from a file" onText={setKey} />
          </div>
        </div>
        <ErrorText error={upload.error} />
        {stored && <Stored cert={stored} />}
        <div class="actions">
          {uploaded && (
            <button type="button" class="btn danger-outline" onClick={() => setConfirming(true)}>
              Remove certificate…
            </button>
          )}
          <button type="submit" class="btn primary" disabled={upload.busy || !cert.trim() || !key.trim()}>
            {upload.busy ? "Uploading…" : "Upload certificate"}
          </button>
        </div>
      </form>
      <ConfirmDialog
        open={confirming}
        title={`Remove the certificate for ${domain}?`}
        confirmLabel="Remove certificate"
        onClose={() => setConfirming(false)}
        onConfirm={async () => {
          await api.apps.removeCert(slug, domain);
          setStored(null);
          toast(`Certificate for ${domain} removed`);
          onChanged();
        }}
      >
        <p>{domain} is then served a certificate of the local CA, which browsers warn about, until a new one is uploaded.</p>
      </ConfirmDialog>
    </section>
  );
}
