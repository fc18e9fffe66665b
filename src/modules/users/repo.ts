/** Data access for users and their app grants. */
import { and, asc, eq, sql } from "drizzle-orm";
import type { Orm } from "../../db";
import { appAccess, users } from "../../db/schema";
import type { Role } from "../../shared/roles";

export type UserRow = typeof users.$inferSelect;

/** The user repository: plain reads and writes, no rules. */
export function createUserRepo(orm: Orm) {
  // read by every authenticated request and stream recheck: prepared once (an unprepared drizzle query compiles a new
  // SQLite statement per call, freed only when the collector finalizes it)
  const byId = orm
    .select()
    .from(users)
    .where(eq(users.id, sql.placeholder("id")))
    .prepare();
  const grant = orm
    .select({ one: sql`1` })
    .from(appAccess)
    .where(and(eq(appAccess.userId, sql.placeholder("user")), eq(appAccess.appSlug, sql.placeholder("slug"))))
    .prepare();
  return {
    byId(id: number): UserRow | undefined {
      return byId.get({ id });
    },
    byUsername(username: string): UserRow | undefined {
      return orm.select().from(users).where(sql`lower(${users.username}) = lower(${username})`).get();
    },
    list(): UserRow[] {
      return orm.select().from(users).orderBy(asc(users.id)).all();
    },
    count(): number {
      return orm.select({ n: sql<number>`count(*)` }).from(users).get()!.n;
    },
    countRole(role: Role): number {
      return orm.select({ n: sql<number>`count(*)` }).from(users).where(eq(users.role, role)).get()!.n;
    },
    insert(row: { username: string; passwordHash: string; role: Role; now: string }): UserRow {
      return orm
        .insert(users)
        .values({
          username: row.username,
          passwordHash: row.passwordHash,
          role: row.role,
          createdAt: row.now,
          updatedAt: row.now,
        })
        .returning()
        .get();
    },
    update(id: number, patch: Partial<Pick<UserRow, "role" | "passwordHash">>, now: string, bumpToken: boolean): UserRow {
      return orm
        .update(users)
        .set({ ...patch, updatedAt: now, ...(bumpToken ? { tokenVersion: sql`${users.tokenVersion} + 1` } : {}) })
        .where(eq(users.id, id))
        .returning()
        .get();
    },
    bumpTokenVersion(id: number, now: string): void {
      orm
        .update(users)
        .set({ tokenVersion: sql`${users.tokenVersion} + 1`, updatedAt: now })
        .where(eq(users.id, id))
        .run();
    },
    delete(id: number): void {
      orm.delete(users).where(eq(users.id, id)).run();
    },
    grants(userId: number): string[] {
      return orm
        .select({ slug: appAccess.appSlug })
        .from(appAccess)
        .where(eq(appAccess.userId, userId))
        .orderBy(asc(appAccess.appSlug))
        .all()
        .map((r) => r.slug);
    },
    allGrants(): Map<number, string[]> {
      const out = new Map<number, string[]>();
      for (const r of orm.select().from(appAccess).orderBy(asc(appAccess.appSlug)).all()) {
        const list = out.get(r.userId) ?? [];
        list.push(r.appSlug);
        out.set(r.userId, list);
      }
      return out;
    },
    hasGrant(userId: number, slug: string): boolean {
      return !!grant.get({ user: userId, slug });
    },
    addGrant(userId: number, slug: string, now: string): boolean {
      return (
        orm
          .insert(appAccess)
          .values({ userId, appSlug: slug, createdAt: now })
          .onConflictDoNothing()
          .returning({ slug: appAccess.appSlug })
          .all().length > 0
      );
    },
    removeGrant(userId: number, slug: string): boolean {
      return (
        orm
          .delete(appAccess)
          .where(and(eq(appAccess.userId, userId), eq(appAccess.appSlug, slug)))
          .returning({ slug: appAccess.appSlug })
          .all().length > 0
      );
    },
  };
}

export type UserRepo = ReturnType<typeof createUserRepo>;
