/**
 * User management (super-admin only at the routes): create, change role or password, delete, and app grants.
 * Every change records its activity entry in the same transaction; the last super-admin cannot be removed.
 */
import type { Db } from "../../db";
import { badRequest, conflict, notFound } from "../../lib/errors";
import { type Clock, iso } from "../../lib/time";
import { ROLES, type Role } from "../../shared/roles";
import type { NewUser, User } from "../../shared/users";
import type { Actor } from "../activity/model";
import type { Activity } from "../activity/service";
import { checkSlug } from "../apps/slug";
import { checkPassword, hashPassword } from "../auth/passwords";
import type { UserRepo, UserRow } from "./repo";

export const USERNAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

/** Validate a username, with a reason safe to show. */
export function checkUsername(v: unknown): string {
  if (typeof v !== "string" || !USERNAME.test(v.trim())) {
    throw badRequest("username must be 1 to 64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit");
  }
  return v.trim();
}

function checkRole(v: unknown): Role {
  if (typeof v !== "string" || !(ROLES as readonly string[]).includes(v))
    throw badRequest(`role must be one of ${ROLES.join(", ")}`);
  return v as Role;
}

/** The wire form of a new user (201 of POST /api/users). */
export function newUserJson(u: UserRow): NewUser {
  return { id: u.id, username: u.username, role: u.role, created_at: u.createdAt };
}

/** The wire form of a user with their grants. */
export function userJson(u: UserRow, grants: string[]): User {
  return { ...newUserJson(u), updated_at: u.updatedAt, app_access: grants };
}

const snap = (u: UserRow) => ({ id: u.id, username: u.username, role: u.role });

export interface UserServiceDeps {
  db: Db;
  clock: Clock;
  repo: UserRepo;
  activity: Activity;
}

/** Build the user service. */
export function createUsers({ db, clock, repo, activity }: UserServiceDeps) {
  const must = (id: number) => {
    const u = repo.byId(id);
    if (!u) throw notFound();
    return u;
  };
  const keepsASuperAdmin = (u: UserRow) => {
    if (u.role === "super_admin" && repo.countRole("super_admin") <= 1)
      throw conflict("the last super_admin cannot be removed or demoted");
  };

  return {
    list: (): User[] => {
      const grants = repo.allGrants();
      return repo.list().map((u) => userJson(u, grants.get(u.id) ?? []));
    },
    get: (id: number): User => {
      const u = must(id);
      return userJson(u, repo.grants(u.id));
    },

    async create(input: { username: unknown; password: unknown; role: unknown }, actor: Actor) {
      const username = checkUsername(input.username);
      const role = checkRole(input.role);
      const hash = await hashPassword(checkPassword(input.password));
      return db.tx(() => {
        if (repo.byUsername(username)) throw conflict(`user ${username} already exists`);
        const u = repo.insert({ username, passwordHash: hash, role, now: iso(clock.now()) });
        activity.record({
          actor,
          category: "system",
          action: "user_created",
          target: u.username,
          summary: `${actor.name} created user ${u.username} (${u.role})`,
          after: snap(u),
        });
        return u;
      });
    },

    async update(id: number, input: { role?: unknown; password?: unknown }, actor: Actor) {
      const role = input.role === undefined ? undefined : checkRole(input.role);
      const hash = input.password === undefined ? undefined : await hashPassword(checkPassword(input.password));
      return db.tx(() => {
        const before = must(id);
        if (role && role !== before.role && before.role === "super_admin") keepsASuperAdmin(before);
        const roleChanged = !!role && role !== before.role;
        const patch = { ...(roleChanged ? { role } : {}), ...(hash ? { passwordHash: hash } : {}) };
        if (!roleChanged && !hash) return before;
        const after = repo.update(id, patch, iso(clock.now()), true);
        const what = [roleChanged ? `role ${before.role} → ${after.role}` : "", hash ? "password reset" : ""]
          .filter(Boolean)
          .join(", ");
        activity.record({
          actor,
          category: "system",
          action: "user_updated",
          target: after.username,
          summary: `${actor.name} updated user ${after.username}: ${what}`,
          before: snap(before),
          after: { ...snap(after), ...(hash ? { password_reset: true } : {}) },
        });
        return after;
      });
    },

    delete(id: number, actor: Actor): void {
      db.tx(() => {
        const u = must(id);
        keepsASuperAdmin(u);
        // the grants go with the user (cascade): read them first so the snapshot keeps them
        const grants = repo.grants(id);
        repo.delete(id);
        activity.record({
          actor,
          category: "system",
          action: "user_deleted",
          target: u.username,
          summary: `${actor.name} deleted user ${u.username}`,
          before: { ...snap(u), app_access: grants },
        });
      });
    },

    /** Grant a user access to an app (by slug; the app may be deployed later). */
    grant(id: number, slugInput: unknown, actor: Actor): void {
      const slug = checkSlug(slugInput);
      db.tx(() => {
        const u = must(id);
        if (!repo.addGrant(id, slug, iso(clock.now()))) return;
        activity.record({
          actor,
          category: "access",
          action: "access_granted",
          target: u.username,
          appSlug: slug,
          summary: `${actor.name} granted ${u.username} access to ${slug}`,
          after: { user: u.username, app_slug: slug },
        });
      });
    },

    revoke(id: number, slugInput: unknown, actor: Actor): void {
      const slug = checkSlug(slugInput, "slug");
      db.tx(() => {
        const u = must(id);
        if (!repo.removeGrant(id, slug)) throw notFound();
        activity.record({
          actor,
          category: "access",
          action: "access_revoked",
          target: u.username,
          appSlug: slug,
          summary: `${actor.name} revoked ${u.username}'s access to ${slug}`,
          before: { user: u.username, app_slug: slug },
        });
      });
    },
  };
}

export type Users = ReturnType<typeof createUsers>;
