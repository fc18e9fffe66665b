/**
 * Request schemas of /api/webhooks, one per shape, with the reason each failure answers. What a schema cannot say
 * (a URL's scheme, credentials in it, an IP literal the address policy refuses) is checked by `checkUrl`.
 */
import { t } from "elysia";
import { WEBHOOK_KINDS } from "../../shared/webhooks";
import { checkAddress, literalHost, privateHint } from "./address-policy";
import { PORT_ERROR } from "./safe-http";

export const MAX_NAME = 100;
export const MAX_URL = 2048;
export const MAX_SECRET = 1024;

const Kind = t.Union(
  WEBHOOK_KINDS.map((k) => t.Literal(k)),
  { error: `kind must be one of ${WEBHOOK_KINDS.join(", ")}` },
);
const Url = t.String({ maxLength: MAX_URL, error: `url must be an http or https URL of at most ${MAX_URL} characters` });
const Secret = t.String({ maxLength: MAX_SECRET, error: `secret must be at most ${MAX_SECRET} characters` });

/** POST and PUT /api/webhooks: every field optional in the schema (SPEC); `id` in a body is ignored. */
export const WebhookBody = t.Object({
  name: t.Optional(t.String({ error: `name must be 1 to ${MAX_NAME} characters` })),
  url: t.Optional(Url),
  kind: t.Optional(Kind),
  secret: t.Optional(Secret),
  enabled: t.Optional(t.Boolean({ error: "enabled must be true or false" })),
});
export type WebhookInput = typeof WebhookBody.static;

/** POST /api/webhooks/test; `id` (an addition to the spec) tests a stored destination with its stored secret. */
export const TestBody = t.Object({
  id: t.Optional(t.Integer({ minimum: 1, error: "id must be a destination id" })),
  url: t.Optional(Url),
  kind: t.Optional(Kind),
  secret: t.Optional(Secret),
});
export type TestInput = typeof TestBody.static;

/** GET /api/webhooks/:id/deliveries */
export const DeliveriesQuery = t.Object({
  limit: t.Optional(t.String({ description: "page size, default 50, maximum 200" })),
  before: t.Optional(t.String({ description: "delivery id cursor (exclusive)" })),
});

/** A trimmed name without control characters, or the reason it is not one. */
export function checkName(name: string): string | { error: string } {
  const n = name.trim();
  if (!n || n.length > MAX_NAME || /[\0-\x1f\x7f]/.test(n)) return { error: `name must be 1 to ${MAX_NAME} characters` };
  return n;
}

/**
 * The canonical form of a destination URL (WHATWG, fragment dropped), or the reason it is refused: http or https
 * only, no user name or password, a host, and no IP literal or localhost name the address policy refuses (names are
 * resolved and checked at each delivery).
 */
export function checkUrl(text: string, allowPrivate: boolean): string | { error: string } {
  let u: URL;
  try {
    u = new URL(text.trim());
  } catch {
    return { error: "url must be an http or https URL" };
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return { error: "url must be an http or https URL" };
  if (u.username || u.password) return { error: "url must not contain a user name or password" };
  if (!u.hostname) return { error: "url must name a host" };
  // WHATWG keeps port 0, which a delivery would otherwise read as "no port" and send to 80 or 443
  if (u.port !== "" && Number(u.port) === 0) return { error: PORT_ERROR };
  u.hash = "";
  if (u.href.length > MAX_URL) return { error: `url must be at most ${MAX_URL} characters` };
  const literal = literalHost(u);
  if (literal) {
    const v = checkAddress(literal, { allowPrivate });
    if (!v.ok) return { error: `url must name a public address (${v.address} is ${v.reason})${privateHint(v.reason)}` };
  } else if (!allowPrivate && (u.hostname === "localhost" || u.hostname.endsWith(".localhost"))) {
    return { error: `url must name a public address (localhost is loopback)${privateHint("loopback")}` };
  }
  return u.href;
}

/** The part of a URL everyone may see: Slack and Discord URLs carry their token in the path. */
export function urlOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "";
  }
}
