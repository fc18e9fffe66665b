/**
 * Who may do what: the one place that decides. Routes declare a Requirement; the auth macro resolves the principal
 * and calls `authorize`. CONTRACT: 403 when the role does not allow the route, 404 for an app without a grant.
 */
import { forbidden, notFound, unauthorized } from "../../lib/errors";
import type { Principal } from "../../shared/principal";
import type { Role } from "../../shared/roles";

// test/helpers/server.ts reads Role from here
export type { Role };

/** What a route needs. `public` routes skip authentication entirely. */
export type Requirement =
  | "public"
  | {
      /** Minimum role: any signed-in user, admin (admin or super_admin), or super_admin only. */
      role?: "any" | "admin" | "super_admin";
      /** App-scoped route: read (grant needed for non-admins) or write (grant and a mutating role). */
      app?: "read" | "write";
      /** Only a session cookie will do (dashboard-only routes). */
      session?: boolean;
      /** Where the app slug is: the `:slug` path parameter (default) or the body's `slug` field. */
      slugFrom?: "params" | "body";
    };

const RANK: Record<Role, number> = { viewer: 1, manage: 2, admin: 3, super_admin: 4 };

/** Admins and super-admins reach every app. */
export function seesAllApps(role: Role): boolean {
  return RANK[role] >= RANK.admin;
}

/** Whether a role may change app resources at all. */
export function mayMutateApps(role: Role): boolean {
  return role !== "viewer";
}

/**
 * Decide a request. `hasGrant` is asked only for non-admins on app-scoped routes.
 * Throws 401/403/404 HttpErrors; returns normally when allowed.
 */
export function authorize(
  p: Principal | null,
  req: Exclude<Requirement, "public">,
  app: { slug?: string; hasGrant: (userId: number, slug: string) => boolean },
): void {
  if (!p) throw unauthorized();
  if (req.session && p.via !== "session") throw forbidden();
  const role = p.user.role;
  if (req.role === "super_admin" && role !== "super_admin") throw forbidden();
  if (req.role === "admin" && !seesAllApps(role)) throw forbidden();
  if (req.app) {
    if (!seesAllApps(role)) {
      if (!app.slug || !app.hasGrant(p.user.id, app.slug)) throw notFound();
    }
    if (req.app === "write" && !mayMutateApps(role)) throw forbidden();
  }
}
