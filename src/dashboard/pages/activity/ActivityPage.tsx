/**
 * The activity log: filters in the URL, newest first, and the next page loaded when the end of the list scrolls
 * into view (IntersectionObserver on a sentinel, cursor `next_before`).
 */
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api } from "../../api";
import { ActivityItem } from "../../components/ActivityItem";
import { ErrorText } from "../../components/Field";
import { navigate, useLocation } from "../../router";
import type { ActivityEntry } from "../../types";
import { Filters } from "./Filters";
import { filterFromQuery, filterUrl, type ListFilter, rememberList } from "./filter";

export const PAGE_SIZE = 50;

interface ListState {
  entries: ActivityEntry[];
  next: number | null;
  loading: boolean;
  error: string | null;
  /** The first page has arrived. */
  loaded: boolean;
}

const EMPTY: ListState = { entries: [], next: null, loading: true, error: null, loaded: false };

/** The activity page. */
export function ActivityPage() {
  const { query } = useLocation();
  const key = query.toString();
  const filter = useMemo(() => filterFromQuery(query), [key]);
  const [state, setState] = useState<ListState>(EMPTY);
  const seq = useRef(0);
  const sentinel = useRef<HTMLDivElement>(null);

  const load = useCallback(
    async (before: number | null) => {
      const n = before === null ? ++seq.current : seq.current;
      setState((s) => (before === null ? EMPTY : { ...s, loading: true, error: null }));
      try {
        const page = await api.activity.list({ categories: filter.categories, app: filter.app, limit: PAGE_SIZE, before });
        if (n !== seq.current) return;
        setState((s) => ({
          entries:
            before === null ? page.entries : [...s.entries, ...page.entries.filter((e) => !s.entries.some((x) => x.id === e.id))],
          next: page.next_before,
          loading: false,
          error: null,
          loaded: true,
        }));
      } catch (e) {
        if (n !== seq.current) return;
        setState((s) => ({ ...s, loading: false, error: (e as Error).message, loaded: true }));
      }
    },
    [filter],
  );

  useEffect(() => {
    rememberList(filterUrl(filter));
    void load(null);
  }, [filter, load]);

  // a fresh observer after every load: its first callback reports whether the end is already visible
  useEffect(() => {
    const el = sentinel.current;
    if (!el || state.loading || state.error || state.next === null) return;
    const next = state.next;
    const io = new IntersectionObserver(
      (records) => {
        if (records.some((r) => r.isIntersecting)) {
          io.disconnect();
          void load(next);
        }
      },
      { rootMargin: "300px 0px" },
    );
    io.observe(el);
    return () => io.disconnect();
  }, [state.loading, state.error, state.next, load]);

  const onFilter = useCallback((f: ListFilter) => navigate(filterUrl(f), { replace: true }), []);
  const filtered = filter.categories.length > 0 || filter.app !== "";

  return (
    <>
      <div class="page-head">
        <h1>Activity</h1>
        <p class="muted">Every change, newest first. Open an entry to see what changed.</p>
      </div>
      <Filters filter={filter} onChange={onFilter} />
      <section class="card" aria-labelledby="activity-list-title">
        <div class="card-head">
          <h2 id="activity-list-title">Entries</h2>
          <button type="button" class="btn small" onClick={() => void load(null)}>
            Refresh
          </button>
        </div>
        {state.loaded && !state.error && state.entries.length === 0 && (
          <p class="muted">{filtered ? "No entries match this filter." : "No activity yet."}</p>
        )}
        <ul class="entries" aria-label="Activity entries" aria-busy={state.loading}>
          {state.entries.map((e) => (
            <ActivityItem key={e.id} entry={e} />
          ))}
        </ul>
        <ErrorText error={state.error} />
        <div ref={sentinel} class="list-end">
          {state.loading ? (
            <span class="muted">Loading…</span>
          ) : state.error ? (
            <button type="button" class="btn small" onClick={() => void load(state.entries.length ? state.next : null)}>
              Try again
            </button>
          ) : state.next !== null ? (
            <button type="button" class="btn small" onClick={() => void load(state.next)}>
              Load more
            </button>
          ) : (
            state.entries.length > 0 && <span class="muted">End of the activity log</span>
          )}
        </div>
      </section>
    </>
  );
}
