/** The app's activity feed (GET /api/apps/{slug}/activity), newest first, with the shared entry rows and Load more. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { api } from "../../api";
import { ActivityItem } from "../../components/ActivityItem";
import { ErrorText } from "../../components/Field";
import { Link } from "../../router";
import type { ActivityEntry } from "../../types";

const PAGE = 50;

/** The tab; `finished` changes when an operation ends (its entries are new). */
export function ActivityTab({ slug, finished }: { slug: string; finished: number }) {
  const [entries, setEntries] = useState<ActivityEntry[]>([]);
  const [next, setNext] = useState<number | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const seq = useRef(0);

  const load = useCallback(
    async (before: number | null) => {
      const n = before === null ? ++seq.current : seq.current;
      setLoading(true);
      setError(null);
      try {
        const page = await api.apps.activity(slug, { limit: PAGE, before });
        if (n !== seq.current) return;
        setEntries((old) =>
          before === null ? page.entries : [...old, ...page.entries.filter((e) => !old.some((o) => o.id === e.id))],
        );
        setNext(page.next_before);
      } catch (e) {
        if (n === seq.current) setError((e as Error).message);
      } finally {
        if (n === seq.current) setLoading(false);
      }
    },
    [slug],
  );

  useEffect(() => {
    void load(null);
  }, [load, finished]);

  return (
    <section class="card" aria-labelledby="app-activity-title">
      <div class="card-head">
        <h2 id="app-activity-title">Activity</h2>
        <span class="row-actions">
          <Link href={`/activity?app=${encodeURIComponent(slug)}`} class="small">
            In the activity log
          </Link>
          <button type="button" class="btn small" onClick={() => void load(null)}>
            Refresh
          </button>
        </span>
      </div>
      <ErrorText error={error} />
      {!loading && !error && entries.length === 0 && <p class="muted">No activity for this app yet.</p>}
      <ul class="entries" aria-label={`Activity of ${slug}`} aria-busy={loading}>
        {entries.map((e) => (
          <ActivityItem key={e.id} entry={e} />
        ))}
      </ul>
      <div class="list-end">
        {loading ? (
          <span class="muted">Loading…</span>
        ) : (
          next !== null && (
            <button type="button" class="btn small" onClick={() => void load(next)}>
              Load more
            </button>
          )
        )}
      </div>
    </section>
  );
}
