/** The one "app or 404" rule: an app that was never created or was removed is not found. */
import { notFound } from "../../lib/errors";
import type { AppRepo, AppRow } from "./repo";

/** The live app of `slug`, or a 404. */
export function requireApp(repo: Pick<AppRepo, "bySlug">, slug: string): AppRow {
  const row = repo.bySlug(slug);
  if (!row || row.removedAt) throw notFound();
  return row;
}
