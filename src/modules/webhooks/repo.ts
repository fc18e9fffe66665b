/**
 * Webhook destinations and their delivery log in SQLite. The log keeps the last `DELIVERIES_KEPT` rows per
 * destination; older ones go as each new one is written, so the table cannot grow without bound.
 */
import { and, asc, desc, eq, lt } from "drizzle-orm";
import type { Db } from "../../db";
import { webhookDeliveries, webhooks } from "../../db/schema";

/** Delivery rows kept per destination. */
export const DELIVERIES_KEPT = 200;

export type WebhookRow = typeof webhooks.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type NewWebhook = Omit<typeof webhooks.$inferInsert, "id">;
export type NewDelivery = Omit<typeof webhookDeliveries.$inferInsert, "id">;

/** Build the repository. */
export function createWebhookRepo(db: Db) {
  return {
    list: (): WebhookRow[] => db.orm.select().from(webhooks).orderBy(asc(webhooks.name), asc(webhooks.id)).all(),

    byId: (id: number): WebhookRow | undefined => db.orm.select().from(webhooks).where(eq(webhooks.id, id)).get(),

    insert: (row: NewWebhook): WebhookRow => db.orm.insert(webhooks).values(row).returning().get(),

    update: (id: number, set: Partial<NewWebhook>): WebhookRow =>
      db.orm.update(webhooks).set(set).where(eq(webhooks.id, id)).returning().get(),

    /** Remove a destination; its deliveries go with it (foreign key cascade). */
    remove: (id: number): void => {
      db.orm.delete(webhooks).where(eq(webhooks.id, id)).run();
    },

    /** Log one delivery and drop what falls past the cap. False when the destination no longer exists. */
    logDelivery(row: NewDelivery): boolean {
      return db.tx(() => {
        if (!db.orm.select({ id: webhooks.id }).from(webhooks).where(eq(webhooks.id, row.webhookId)).get()) return false;
        db.orm.insert(webhookDeliveries).values(row).run();
        // the oldest row still kept; everything of this destination older than it goes
        const edge = db.orm
          .select({ id: webhookDeliveries.id })
          .from(webhookDeliveries)
          .where(eq(webhookDeliveries.webhookId, row.webhookId))
          .orderBy(desc(webhookDeliveries.id))
          .limit(1)
          .offset(DELIVERIES_KEPT - 1)
          .get();
        if (edge) {
          db.orm
            .delete(webhookDeliveries)
            .where(and(eq(webhookDeliveries.webhookId, row.webhookId), lt(webhookDeliveries.id, edge.id)))
            .run();
        }
        return true;
      });
    },

    /** The newest deliveries of a destination first; `before` is an exclusive id cursor. */
    deliveries: (webhookId: number, limit: number, before?: number): DeliveryRow[] =>
      db.orm
        .select()
        .from(webhookDeliveries)
        .where(
          before === undefined
            ? eq(webhookDeliveries.webhookId, webhookId)
            : and(eq(webhookDeliveries.webhookId, webhookId), lt(webhookDeliveries.id, before)),
        )
        .orderBy(desc(webhookDeliveries.id))
        .limit(limit)
        .all(),
  };
}

/** The repository's type. */
export type WebhookRepo = ReturnType<typeof createWebhookRepo>;
