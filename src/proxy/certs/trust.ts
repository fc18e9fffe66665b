/**
 * The /trust page (how to install the local CA on each system, with its fingerprint to compare) and the CA download.
 * The server mounts both; neither needs a session, since the CA certificate is public.
 */

/** The parts of the local CA the page shows. */
export interface TrustSource {
  caPem(): string;
  caFingerprint(): string;
  caName(): string;
}

/** File name offered for the download. */
export const CA_FILE_NAME = "sundeck-local-ca.crt";

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** The HTML of the trust page; `downloadHref` is where the CA download is mounted. */
export function trustPage(ca: TrustSource, downloadHref = "/trust/ca.crt"): string {
  const name = escapeHtml(ca.caName());
  const fp = escapeHtml(ca.caFingerprint());
  const href = escapeHtml(downloadHref);
  const file = CA_FILE_NAME;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Trust the Sundeck local CA</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1d2430}
h1{font-size:1.5rem}h2{font-size:1.1rem;margin-top:1.8rem}
code,pre{font:14px ui-monospace,monospace;background:#f1f3f6;border-radius:4px}
pre{padding:.6rem .8rem;overflow-x:auto}code{padding:0 .25rem}
.fp{word-break:break-all}a.button{display:inline-block;padding:.5rem 1rem;background:#1f6feb;color:#fff;border-radius:6px;text-decoration:none}
</style>
</head>
<body>
<h1>Trust the Sundeck local CA</h1>
<p>Sites served in <code>local</code> TLS mode use certificates signed by <strong>${name}</strong>, a certificate
authority created on this server. Browsers warn about them until you install this CA on your device. Install it only on
devices you control: whoever holds its key can issue certificates your device will trust.</p>
<p><a class="button" href="${href}" download="${file}">Download ${file}</a></p>
<p>Before installing, check that the SHA-256 fingerprint of the file is exactly:</p>
<pre class="fp">${fp}</pre>
<pre>openssl x509 -in ${file} -noout -fingerprint -sha256</pre>

<h2>Linux</h2>
<p>Debian, Ubuntu:</p>
<pre>sudo cp ${file} /usr/local/share/ca-certificates/
sudo update-ca-certificates</pre>
<p>Fedora, RHEL, openSUSE:</p>
<pre>sudo cp ${file} /etc/pki/ca-trust/source/anchors/
sudo update-ca-trust</pre>
<p>Arch: <code>sudo trust anchor --store ${file}</code>. Chrome and Chromium on Linux keep their own store: Settings,
Privacy and security, Security, Manage certificates, Authorities, Import.</p>

<h2>macOS</h2>
<pre>sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain ${file}</pre>
<p>Or open the file in Keychain Access, add it to the System keychain, open it and set
<em>When using this certificate</em> to <em>Always Trust</em>. Safari and Chrome use this store.</p>

<h2>Windows</h2>
<p>In an administrator prompt:</p>
<pre>certutil -addstore -f ROOT ${file}</pre>
<p>Or double-click the file, choose <em>Install Certificate</em>, <em>Local Machine</em>, and place it in
<em>Trusted Root Certification Authorities</em>. Edge and Chrome use this store.</p>

<h2>Firefox</h2>
<p>Firefox has its own store: Settings, Privacy &amp; Security, Certificates, <em>View Certificates</em>,
<em>Authorities</em>, <em>Import</em>, and tick <em>Trust this CA to identify websites</em>. On Windows and macOS,
setting <code>security.enterprise_roots.enabled</code> to <code>true</code> in <code>about:config</code> makes Firefox
use the system store instead.</p>

<h2>Command-line tools</h2>
<p>curl, git and most tools use the system store once it is updated. Node.js needs
<code>NODE_EXTRA_CA_CERTS=/path/to/${file}</code>; Python requests needs <code>REQUESTS_CA_BUNDLE</code> pointing at
a bundle that includes it.</p>
</body>
</html>
`;
}

/** The trust page as a response. */
export function trustResponse(ca: TrustSource, downloadHref?: string): Response {
  return new Response(trustPage(ca, downloadHref), {
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" },
  });
}

/** The CA certificate as a download (PEM, application/x-x509-ca-cert). */
export function caDownload(ca: TrustSource): Response {
  return new Response(ca.caPem(), {
    headers: {
      "content-type": "application/x-x509-ca-cert",
      "content-disposition": `attachment; filename="${CA_FILE_NAME}"`,
      "cache-control": "no-cache",
    },
  });
}
