/**
 * The `auth` route option. Every route declares a Requirement; this runs before body validation, so anonymous
 * callers get 401 and unauthorized ones 403/404 before any 400. It also turns body problems (too large, malformed)
 * into their answers, and refuses cross-origin state changes made with a session cookie.
 */
import { Elysia } from "elysia";
import type { Ctx } from "../../context";
import { BodyProblem } from "../../http/body";
import { type RequestMeta, requestMeta, sameOrigin } from "../../http/request";
import { forbidden, HttpError } from "../../lib/errors";
import type { Principal } from "../../shared/principal";
import type { Actor } from "../activity/model";
import { authorize, type Requirement } from "./policy";

interface Resolved {
  principal: Principal | null;
  meta: RequestMeta;
}

const resolved = new WeakMap<Request, Resolved>();
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The activity actor of a signed-in request. */
export function actorOf(p: Principal, meta: RequestMeta): Actor {
  return { userId: p.user.id, name: p.user.username, source: p.via === "session" ? "ui" : "api", ip: meta.ip };
}

/** The auth plugin; `.use` it in every module that declares routes. */
export function authPlugin(ctx: Ctx) {
  const check = async (c: { request: Request; server: any; params?: any; body?: unknown }, req: Requirement) => {
    const meta = requestMeta(c.request, c.server, ctx.trusted, ctx.proxyToken);
    let principal: Principal | null = null;
    if (req !== "public") {
      principal = await ctx.auth.resolve(c.request);
      // a slug in the body is only known once the body is valid: that app check waits for resolve()
      authorize(principal, req.slugFrom === "body" ? { ...req, app: undefined } : req, {
        slug: c.params?.slug,
        hasGrant: ctx.userRepo.hasGrant,
      });
      if (principal!.via === "session" && !SAFE_METHODS.has(c.request.method) && !sameOrigin(c.request, meta)) throw forbidden();
    }
    if (c.body instanceof BodyProblem) throw new HttpError(c.body.status, c.body.reason);
    const r = { principal, meta };
    resolved.set(c.request, r);
    return r;
  };

  return new Elysia({ name: "sundeck-auth" }).macro({
    /** Declare who may call the route. */
    auth: (req: Requirement) => ({
      // recorded on the route so the OpenAPI document and the route audit test can read it
      detail: { "x-sundeck-auth": req } as Record<string, unknown>,
      // arrows, not methods: Elysia's handler analysis (Sucrose) cannot read minified method shorthand and warns
      transform: async (c: any) => {
        await check(c, req);
      },
      resolve: async (c: any) => {
        const r = resolved.get(c.request) ?? (await check(c, req));
        const principal = r.principal as Principal;
        if (req !== "public" && req.slugFrom === "body" && req.app) {
          authorize(principal, req, { slug: (c.body as { slug?: string })?.slug, hasGrant: ctx.userRepo.hasGrant });
        }
        return {
          principal,
          meta: r.meta,
          actor: principal
            ? actorOf(principal, r.meta)
            : ({ userId: null, name: "anonymous", source: "ui", ip: r.meta.ip } as Actor),
        };
      },
    }),
  });
}
