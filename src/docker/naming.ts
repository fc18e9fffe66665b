/**
 * How Sundeck names what it creates in Docker: one compose project per app, and the shared network the proxy
 * reaches routed services on (CONTRACT: `sundeck-<slug>`, `sundeck-public`).
 */

/** The network every routed service joins so the proxy can reach it. */
export const PUBLIC_NETWORK = "sundeck-public";

/** Compose project name of an app. */
export const projectName = (slug: string) => `sundeck-${slug}`;
