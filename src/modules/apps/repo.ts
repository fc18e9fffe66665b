/** Data access for apps (their rows: desired state flags, current and attempted version, scale). No rules here. */
import { eq } from "drizzle-orm";
import type { Db } from "../../db";
import { apps } from "../../db/schema";

export type AppRow = typeof apps.$inferSelect;

/** Build the repository. */
export function createAppRepo(db: Db) {
  const o = db.orm;
  return {
    bySlug: (slug: string) => o.select().from(apps).where(eq(apps.slug, slug)).get(),
    byId: (id: number) => o.select().from(apps).where(eq(apps.id, id)).get(),
    list: () => o.select().from(apps).orderBy(apps.slug).all(),
    create: (slug: string, now: string) => o.insert(apps).values({ slug, createdAt: now, updatedAt: now }).returning().get(),
    update: (id: number, patch: Partial<Omit<AppRow, "id" | "slug" | "createdAt">>, now: string) =>
      o
        .update(apps)
        .set({ ...patch, updatedAt: now })
        .where(eq(apps.id, id))
        .returning()
        .get(),
    /** Delete the app, its versions and deploys; its activity keeps the slug but loses the reference. */
    delete(id: number): void {
      db.sqlite.run("UPDATE activity SET app_id = NULL WHERE app_id = ?", [id]);
      o.delete(apps).where(eq(apps.id, id)).run();
    },
  };
}

export type AppRepo = ReturnType<typeof createAppRepo>;

/** The desired replicas of an app, per service (services it does not name run as their compose file says). */
export function appScale(app: Pick<AppRow, "scaleJson">): Record<string, number> {
  try {
    return JSON.parse(app.scaleJson) as Record<string, number>;
  } catch {
    return {};
  }
}
