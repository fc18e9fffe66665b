/**
 * The link to the server's /trust page (how to install the local CA). It is a server page, not a dashboard route, so
 * it is a plain anchor; it opens in a new tab so the dashboard stays where it was.
 */
import type { ComponentChildren } from "preact";

/** A link to /trust in a new tab. */
export function TrustLink({ children = "Trust page" }: { children?: ComponentChildren }) {
  return (
    <a href="/trust" target="_blank" rel="noopener noreferrer">
      {children}
      <span class="sr-only"> (opens in a new tab)</span>
    </a>
  );
}

/** One sentence on why the local CA must be trusted, with the link. */
export function TrustNote() {
  return (
    <p class="trust-note">
      Certificates in <code>local</code> mode are signed by this server's own certificate authority, which browsers do not know
      yet: install it once on each device from the <TrustLink>trust page</TrustLink> to open these sites without warnings.
    </p>
  );
}
