/**
 * The alert history: every firing and resolved transition, newest first, filtered by app and state, a page at a time
 * (`next_before`, with a "Load older" button). The first page is refreshed with the rules; older pages stay as loaded.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../../api";
import { ErrorText, SelectField } from "../../components/Field";
import { formatTime, relativeTime } from "../../format";
import type { AlertHistoryEntry, AlertHistoryFilter } from "../../types";
import { KIND_INFO } from "./rules";

const PAGE = 50;

const STATE_OPTIONS = [
  { value: "", label: "Any" },
  { value: "firing", label: "Firing" },
  { value: "resolved", label: "Resolved" },
];

function Entry({ e }: { e: AlertHistoryEntry }) {
  const kind = KIND_INFO[e.kind as keyof typeof KIND_INFO]?.name ?? e.kind;
  return (
    <li class="alert-entry">
      <span class={`badge ${e.state === "firing" ? "bad" : "ok"}`}>{e.state}</span>
      <span class="alert-entry-main">
        <strong>{e.message || kind}</strong>
        <span class="muted small">
          {" "}
          {[e.app_slug ?? "global", e.subject && e.subject !== e.app_slug ? e.subject : null, kind].filter(Boolean).join(" · ")}
        </span>
      </span>
      <time class="muted small" dateTime={e.created_at} title={formatTime(e.created_at)}>
        {relativeTime(e.created_at)}
      </time>
    </li>
  );
}

/** The section; `refresh` changes whenever the page reloads its rules (the first page follows). */
export function History({ apps, refresh }: { apps: string[]; refresh: number }) {
  const [filter, setFilter] = useState<AlertHistoryFilter>({});
  const [entries, setEntries] = useState<AlertHistoryEntry[]>([]);
  const [next, setNext] = useState<number | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const seq = useRef(0);

  const load = async (before: number | null) => {
    const n = ++seq.current;
    setLoading(true);
    try {
      const page = await api.alerts.history({ ...filter, limit: PAGE, before });
      if (n !== seq.current) return;
      setEntries((cur) => (before ? [...cur, ...page.entries] : page.entries));
      setNext(page.next_before);
      setError(null);
    } catch (e) {
      if (n === seq.current) setError((e as Error).message);
    } finally {
      if (n === seq.current) setLoading(false);
    }
  };

  // a new filter starts over; a refresh replaces the first page only while no older page was loaded
  useEffect(() => {
    void load(null);
  }, [filter.app, filter.state]);
  useEffect(() => {
    if (refresh > 0 && entries.length <= PAGE) void load(null);
  }, [refresh]);

  return (
    <section class="card" aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
      <form class="filter-row" aria-label="Filter alert history" onSubmit={(e) => e.preventDefault()}>
        <SelectField
          label="App"
          class="compact"
          value={filter.app ?? ""}
          onValue={(v) => setFilter((f) => ({ ...f, app: v || undefined }))}
          options={[{ value: "", label: "All" }, ...apps.map((a) => ({ value: a, label: a }))]}
        />
        <SelectField
          label="State"
          class="compact"
          value={filter.state ?? ""}
          onValue={(v) => setFilter((f) => ({ ...f, state: (v || undefined) as AlertHistoryFilter["state"] }))}
          options={STATE_OPTIONS}
        />
      </form>
      <ErrorText error={error} />
      {!loading && !error && entries.length === 0 && (
        <p class="muted">Nothing has fired{filter.app || filter.state ? " that matches" : " yet"}.</p>
      )}
      <ul class="alert-entries" aria-label="Alert history" aria-busy={loading}>
        {entries.map((e) => (
          <Entry key={e.id} e={e} />
        ))}
      </ul>
      {next !== null && (
        <button type="button" class="btn" disabled={loading} onClick={() => load(next)}>
          Load older
        </button>
      )}
    </section>
  );
}
