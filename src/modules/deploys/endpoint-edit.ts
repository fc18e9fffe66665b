/**
 * PUT /api/apps/{slug}/endpoints before the deploy: the body checked entry by entry, the app's compose file rewritten
 * with the routing labels asked for, and the result held to the deploy's rules and read back. Pure but for `validate`.
 */
import type { Static } from "@sinclair/typebox";
import { t } from "elysia";
import { type EndpointEntry, entriesOf, rewriteProblem, sameEntries, writeEndpointLabels } from "../../compose/endpoint-labels";
import { parseEnvFile } from "../../compose/envfile";
import { isValidHost, pathProblem } from "../../compose/label-values";
import { parseAppLabels } from "../../compose/labels";
import type { ComposeProject } from "../../compose/model";
import { parseCompose } from "../../compose/parse";
import type { Prepared } from "../../compose/prepare";
import { badRequest, conflict, HttpError } from "../../lib/errors";
import { TLS_MODES } from "../../shared/tls";

/** Most endpoints one request may set. */
export const MAX_ENDPOINTS = 100;

/** The body: the complete list of the app's endpoints, one host each. */
export const EndpointsBody = t.Array(
  t.Object({
    service: t.String({ description: "a service of the app's compose file" }),
    domain: t.String({ description: "one host name (a `*.` wildcard first label allowed)" }),
    port: t.Unknown({ description: "the container port, a whole number in 1-65535" }),
    path: t.Optional(t.Union([t.String(), t.Null()], { description: "a path prefix starting with /; default /" })),
    tls: t.Optional(t.Union([t.String(), t.Null()], { description: "auto, custom, local or off; default the server's" })),
  }),
  { maxItems: MAX_ENDPOINTS },
);

/** The body as Elysia hands it over (the wire shape is EndpointEdit in shared/apps.ts). */
type Body = Static<typeof EndpointsBody>;

/** Check each entry (naming the one at fault) against the app's services; host+path claimed twice is refused. */
export function checkEntries(body: Body, services: string[]): EndpointEntry[] {
  const claimed = new Map<string, number>();
  return body.map((raw, i) => {
    const at = `endpoints[${i}]`;
    const fail = (why: string): never => {
      throw badRequest(`${at} (${JSON.stringify(raw.service.slice(0, 63))}, ${JSON.stringify(raw.domain.slice(0, 80))}): ${why}`);
    };
    if (!services.includes(raw.service))
      fail(`no service ${JSON.stringify(raw.service.slice(0, 63))} in the app (it has ${services.join(", ")})`);
    const domain = raw.domain.trim().toLowerCase();
    if (domain.includes(",")) fail("domain takes one host; give each host its own entry");
    if (!isValidHost(domain)) fail("domain is not a valid host name");
    const port = raw.port;
    if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535)
      fail("port must be a whole number in 1-65535");
    let path = (raw.path ?? "/").trim() || "/";
    const problem = pathProblem(path);
    if (problem) fail(`path ${problem}`);
    path = path.length > 1 ? path.replace(/\/$/, "") : path;
    const tls = raw.tls === undefined || raw.tls === null || raw.tls === "" ? null : raw.tls.trim().toLowerCase();
    if (tls !== null && !(TLS_MODES as readonly string[]).includes(tls)) fail("tls must be auto, custom, local or off");
    const key = `${domain}${path}`;
    const other = claimed.get(key);
    if (other !== undefined)
      fail(`host ${domain} with path ${path} is already endpoints[${other}]; give one of them another path`);
    claimed.set(key, i);
    return { service: raw.service, domain, port: port as number, path, tls: tls as EndpointEntry["tls"] };
  });
}

/** The current file parsed; one that no longer parses must be fixed by a deploy first. */
function current(compose: string, env: string): ComposeProject {
  try {
    return parseCompose(compose, parseEnvFile(env));
  } catch (e) {
    if (e instanceof HttpError)
      throw conflict(`the app's compose file does not read (${e.reason ?? e.message}); deploy a fixed one first`);
    throw e;
  }
}

/**
 * The compose text to deploy for `body`: the current text itself when it already routes exactly that (a redeploy of
 * the same version), else the rewrite, refused with a 400 when the deploy's rules refuse it or it reads back wrong.
 */
export function editEndpoints(
  files: { compose: string; env: string },
  body: Body,
  validate: (compose: string) => Prepared,
): string {
  const before = current(files.compose, files.env);
  const entries = checkEntries(
    body,
    before.services.map((s) => s.name),
  );
  let routed: EndpointEntry[] | null = null;
  try {
    routed = entriesOf(parseAppLabels(before).endpoints);
  } catch {
    // the current labels are refused: the rewrite replaces them
  }
  if (routed && sameEntries(routed, entries)) return files.compose;
  const compose = writeEndpointLabels(files.compose, entries);
  const problem = rewriteProblem(before, validate(compose).project, entries);
  if (problem) throw badRequest(problem);
  return compose;
}
