/** Runtime settings stored in the database, overriding the config file: audit retention and public host. */
import { eq } from "drizzle-orm";
import type { Db } from "../../db";
import { settings } from "../../db/schema";
import type { Clock } from "../../lib/time";
import { iso } from "../../lib/time";

/** Typed access to the settings table with config-file fallbacks. */
export function createSettings(db: Db, clock: Clock, fallback: { auditRetentionDays: number; publicHost: string }) {
  const read = <T>(key: string): T | undefined => {
    const row = db.orm.select().from(settings).where(eq(settings.key, key)).get();
    return row ? (JSON.parse(row.value) as T) : undefined;
  };
  const write = (key: string, value: unknown) => {
    const now = iso(clock.now());
    db.orm
      .insert(settings)
      .values({ key, value: JSON.stringify(value), updatedAt: now })
      .onConflictDoUpdate({ target: settings.key, set: { value: JSON.stringify(value), updatedAt: now } })
      .run();
  };
  return {
    auditRetentionDays: (): number => read<number>("audit_retention_days") ?? fallback.auditRetentionDays,
    setAuditRetentionDays: (days: number) => write("audit_retention_days", days),
    publicHost: (): string => read<string>("public_host") ?? fallback.publicHost,
    setPublicHost: (host: string) => write("public_host", host),
  };
}

export type Settings = ReturnType<typeof createSettings>;
