/** TLS modes of the server (`tls.mode`) and of an endpoint (`sundeck.tls`): plain data for config, server and dashboard. */
export const TLS_MODES = ["auto", "custom", "off", "local"] as const;

/** One of TLS_MODES. */
export type TlsMode = (typeof TLS_MODES)[number];
