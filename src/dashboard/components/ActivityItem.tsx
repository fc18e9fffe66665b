/** One activity entry in a list: category, summary, who and when; links to its detail page. */
import { formatTime, humanize, relativeTime, sourceLabel } from "../format";
import { Link } from "../router";
import type { ActivityEntry } from "../types";

const SYNC_LABELS: Record<string, string> = { synced: "Synced", pending: "Pending", failed: "Sync failed" };

/** The git sync badge of an entry (none for runtime-only entries). */
export function SyncBadge({ status }: { status: string | null }) {
  if (!status) return null;
  return <span class={`badge sync-${status}`}>{SYNC_LABELS[status] ?? humanize(status)}</span>;
}

/** The category badge. */
export function CategoryBadge({ category }: { category: string }) {
  return <span class={`badge cat cat-${category}`}>{category}</span>;
}

/** A list row for one entry. */
export function ActivityItem({ entry: e }: { entry: ActivityEntry }) {
  return (
    <li class="entry" data-id={e.id}>
      <Link href={`/activity/${e.id}`} class="entry-link">
        <span class="entry-head">
          <CategoryBadge category={e.category} />
          <span class="entry-summary">{e.summary}</span>
        </span>
        {e.error && <span class="entry-error">{e.error}</span>}
        <span class="entry-meta">
          <span>{e.actor_name}</span>
          <span>via {sourceLabel(e.actor_source)}</span>
          {e.app_slug && <span>app {e.app_slug}</span>}
          <time dateTime={e.created_at} title={formatTime(e.created_at)}>
            {relativeTime(e.created_at)}
          </time>
          <SyncBadge status={e.sync_status} />
        </span>
      </Link>
    </li>
  );
}
