/**
 * Authentication: who is calling (session cookie or API key), first-run setup, login with throttling and lockout,
 * logout and password change. Authorization lives in policy.ts.
 */
import type { Db } from "../../db";
import { badRequest, conflict, HttpError } from "../../lib/errors";
import type { Clock } from "../../lib/time";
import { iso } from "../../lib/time";
import type { Log } from "../../log/logger";
import type { Principal } from "../../shared/principal";
import type { Role } from "../../shared/roles";
import type { Actor } from "../activity/model";
import type { Activity } from "../activity/service";
import type { ApiKeys } from "../apikeys/service";
import type { UserRepo, UserRow } from "../users/repo";
import { checkUsername } from "../users/service";
import type { LoginGuard } from "./lockout";
import { burnVerify, checkPassword, hashPassword, MAX_PASSWORD, verifyPassword } from "./passwords";
import { readSessionCookie, type Sessions } from "./sessions";

export interface AuthDeps {
  db: Db;
  clock: Clock;
  log: Log;
  users: UserRepo;
  apiKeys: ApiKeys;
  sessions: Sessions;
  guard: LoginGuard;
  activity: Activity;
}

/** The one answer to a failed login, whatever the cause. */
const invalidCredentials = () => new HttpError(401, "invalid credentials");

/** Build the authentication service. */
export function createAuth(d: AuthDeps) {
  const principalOf = (u: UserRow, via: Principal["via"], credential: string, apiKeyId?: number): Principal => ({
    user: { id: u.id, username: u.username, role: u.role as Role, tokenVersion: u.tokenVersion },
    via,
    credential,
    ...(apiKeyId !== undefined ? { apiKeyId } : {}),
  });

  const fromCredential = async (via: Principal["via"], credential: string): Promise<Principal | null> => {
    if (via === "apikey") {
      const hit = d.apiKeys.verify(credential);
      const u = hit && d.users.byId(hit.userId);
      return u ? principalOf(u, "apikey", credential, hit.keyId) : null;
    }
    const claims = await d.sessions.verify(credential);
    if (!claims || !/^\d+$/.test(claims.sub)) return null;
    const u = d.users.byId(Number(claims.sub));
    return u && u.tokenVersion === claims.tv ? principalOf(u, "session", credential) : null;
  };

  const authEntry = (actor: Actor, action: string, summary: string, error?: string) =>
    d.activity.record({ actor, category: "auth", action, target: actor.name, summary, error });

  return {
    /**
     * The caller of a request, or null. An Authorization header, when present, must hold a valid API key: it is
     * never silently replaced by a cookie.
     */
    async resolve(request: Request): Promise<Principal | null> {
      const header = request.headers.get("authorization");
      if (header !== null) {
        const m = /^Bearer\s+(\S+)$/i.exec(header.trim());
        return m ? fromCredential("apikey", m[1]) : null;
      }
      const token = readSessionCookie(request.headers.get("cookie"));
      return token ? fromCredential("session", token) : null;
    },

    /** Re-check a principal's credential (for open sockets): null when revoked, expired or the user is gone. */
    recheck: (p: Principal) => fromCredential(p.via, p.credential),

    needsSetup: () => d.users.count() === 0,

    /** Create the first super-admin; refused once any user exists. */
    async setup(username: unknown, password: unknown, ctx: { ip: string; source: Actor["source"] }) {
      const name = checkUsername(username);
      const hash = await hashPassword(checkPassword(password));
      const user = d.db.tx(() => {
        if (d.users.count() > 0) throw conflict("setup is already complete");
        const u = d.users.insert({ username: name, passwordHash: hash, role: "super_admin", now: iso(d.clock.now()) });
        d.activity.record({
          actor: { userId: u.id, name: u.username, source: ctx.source, ip: ctx.ip },
          category: "system",
          action: "user_created",
          target: u.username,
          summary: `${u.username} completed first-run setup as super_admin`,
          after: { id: u.id, username: u.username, role: u.role },
        });
        return u;
      });
      d.log.info("first-run setup complete", { username: user.username });
      return { user, token: await d.sessions.sign(user.id, user.tokenVersion) };
    },

    /** Check credentials and open a session. Throws 429 when the IP is over its allowance, else 401 on any failure. */
    async login(username: unknown, password: unknown, ip: string) {
      const rate = d.guard.rate(ip);
      if (!rate.ok) throw new HttpError(429, undefined, { "retry-after": String(rate.retryAfter) });
      if (typeof username !== "string" || typeof password !== "string" || !username || username.length > 128) {
        throw invalidCredentials();
      }
      const pw = password.slice(0, MAX_PASSWORD);
      const user = d.users.byUsername(username);
      const actor: Actor = { userId: user?.id ?? null, name: user?.username ?? username.trim().slice(0, 64), source: "ui", ip };

      if (d.guard.isLocked(username, ip)) {
        await burnVerify(pw);
        d.db.tx(() => authEntry(actor, "login_failed", `failed login for ${actor.name}`, "locked out"));
        d.log.warn("login refused: locked out", { username: actor.name, ip });
        throw invalidCredentials();
      }
      let ok = false;
      if (user) ok = await verifyPassword(pw, user.passwordHash);
      else await burnVerify(pw);
      if (!ok || !user) {
        d.db.tx(() => {
          d.guard.failed(username, ip);
          authEntry(actor, "login_failed", `failed login for ${actor.name}`, user ? "wrong password" : "unknown user");
        });
        d.log.warn("login failed", { username: actor.name, ip });
        throw invalidCredentials();
      }
      d.db.tx(() => {
        d.guard.succeeded(username, ip);
        authEntry(actor, "login_succeeded", `${user.username} logged in`);
      });
      return { user, token: await d.sessions.sign(user.id, user.tokenVersion) };
    },

    /** End every session of the caller by bumping the token version. */
    logout(p: Principal, actor: Actor): void {
      d.db.tx(() => {
        d.users.bumpTokenVersion(p.user.id, iso(d.clock.now()));
        authEntry(actor, "logged_out", `${p.user.username} logged out`);
      });
    },

    /** Change the caller's own password (current one required); ends all their sessions and returns a fresh one. */
    async changePassword(p: Principal, current: unknown, next: unknown, actor: Actor): Promise<string> {
      const fresh = checkPassword(next, "new_password");
      const user = d.users.byId(p.user.id);
      if (!user || typeof current !== "string" || !(await verifyPassword(current.slice(0, MAX_PASSWORD), user.passwordHash))) {
        throw badRequest("current_password is wrong");
      }
      const hash = await hashPassword(fresh);
      const updated = d.db.tx(() => {
        const u = d.users.update(user.id, { passwordHash: hash }, iso(d.clock.now()), true);
        authEntry(actor, "password_changed", `${user.username} changed their password`);
        return u;
      });
      return d.sessions.sign(updated.id, updated.tokenVersion);
    },
  };
}

export type Auth = ReturnType<typeof createAuth>;
