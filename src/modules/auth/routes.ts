/** Routes of first-run setup, login, logout, the caller's identity and own password. */
import { Elysia, t } from "elysia";
import type { Ctx } from "../../context";
import { noContent, withStatus } from "../../http/respond";
import type { Me, SetupStatus, SignedIn } from "../../shared/auth";
import { userJson } from "../users/service";
import { authPlugin } from "./macro";
import { sessionCookie } from "./sessions";

const Credentials = t.Object({ username: t.String(), password: t.String() });

/** /api/setup, /api/auth/*, /api/me */
export function authRoutes(ctx: Ctx) {
  const tlsOff = ctx.config.tls.mode === "off";
  const cookie = (token: string | null, secure: boolean) => sessionCookie(token, { tlsOff, secure });

  return new Elysia({ name: "auth-routes", prefix: "/api" })
    .use(authPlugin(ctx))
    .get("/setup/status", (): SetupStatus => ({ needs_setup: ctx.auth.needsSetup() }), {
      auth: "public",
      detail: { tags: ["auth"], summary: "Whether first-run setup is still needed" },
    })
    .post(
      "/setup",
      async ({ body, meta, set }) => {
        const { user, token } = await ctx.auth.setup(body.username, body.password, { ip: meta.ip, source: "ui" });
        set.headers["set-cookie"] = cookie(token, meta.secure);
        return withStatus(set, 201, userJson(user, []));
      },
      {
        auth: "public",
        body: Credentials,
        detail: { tags: ["auth"], summary: "Create the first super-admin (only while no user exists)" },
      },
    )
    .post(
      "/auth/login",
      async ({ body, meta, set }): Promise<SignedIn> => {
        const { user, token } = await ctx.auth.login(body.username, body.password, meta.ip);
        set.headers["set-cookie"] = cookie(token, meta.secure);
        return { id: user.id, username: user.username, role: user.role };
      },
      // fields are checked by the service so every bad login answers the same 401
      {
        auth: "public",
        body: t.Object({ username: t.Unknown(), password: t.Unknown() }),
        detail: { tags: ["auth"], summary: "Log in; sets the session cookie" },
      },
    )
    .post(
      "/auth/logout",
      ({ principal, actor, meta, set }) => {
        ctx.auth.logout(principal, actor);
        set.headers["set-cookie"] = cookie(null, meta.secure);
        return noContent(set);
      },
      { auth: { role: "any", session: true }, detail: { tags: ["auth"], summary: "Log out; ends every session of the user" } },
    )
    .get(
      "/me",
      ({ principal }): Me => ({
        id: principal.user.id,
        username: principal.user.username,
        role: principal.user.role,
        app_access: ctx.userRepo.grants(principal.user.id),
      }),
      { auth: { role: "any" }, detail: { tags: ["auth"], summary: "The calling user" } },
    )
    .put(
      "/me/password",
      async ({ principal, actor, body, meta, set }) => {
        // earlier sessions are void now; this browser gets a fresh one
        const token = await ctx.auth.changePassword(principal, body.current_password, body.new_password, actor);
        set.headers["set-cookie"] = cookie(token, meta.secure);
        return noContent(set);
      },
      {
        auth: { role: "any", session: true },
        body: t.Object({ current_password: t.String(), new_password: t.String() }),
        detail: { tags: ["auth"], summary: "Change the caller's password" },
      },
    );
}
