/**
 * Live container logs of one service (every replica): service picker, history length, since, follow, a filter; stderr
 * lines stand out. The stream reconnects with backoff on unexpected closes; after a clean end it offers to reconnect.
 */
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { ErrorText, SelectField, TextField } from "../../components/Field";
import type { AppView } from "../../types";
import type { StreamStatus } from "../../ws";
import { useContainerLogs } from "./useContainerLogs";

const MAX_SHOWN = 2000;
const DEFAULT_TAIL = 100;

function statusText(s: StreamStatus, follow: boolean): string {
  switch (s.state) {
    case "connecting":
      return "Connecting…";
    case "open":
      return follow ? "Live" : "Loading history…";
    case "waiting":
      return `Disconnected, reconnecting in ${Math.round(s.retryInMs / 1000)} s`;
    case "closed":
      return follow ? "Stream ended (the containers stopped)" : "History loaded";
  }
}

const clock = (ts: string) => (ts.length >= 19 ? ts.slice(11, 19) : "");

/** The tab. */
export function LogsTab({ app }: { app: AppView }) {
  const names = app.services.map((s) => s.name);
  const [service, setService] = useState(names.includes("web") ? "web" : (names[0] ?? "web"));
  const [follow, setFollow] = useState(true);
  const [tail, setTail] = useState(DEFAULT_TAIL);
  const [since, setSince] = useState("");
  const [draftTail, setDraftTail] = useState(String(DEFAULT_TAIL));
  const [draftSince, setDraftSince] = useState("");
  const [filter, setFilter] = useState("");
  const logs = useContainerLogs(app.slug, { service, tail, follow, since: since || undefined });
  const view = useRef<HTMLDivElement>(null);
  const stick = useRef(true);

  useLayoutEffect(() => {
    const el = view.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  });

  const needle = filter.trim().toLowerCase();
  const matching = needle ? logs.lines.filter((l) => l.line.toLowerCase().includes(needle)) : logs.lines;
  const shown = matching.length > MAX_SHOWN ? matching.slice(-MAX_SHOWN) : matching;
  const apply = (e?: Event) => {
    e?.preventDefault();
    const n = Number(draftTail);
    setTail(Number.isInteger(n) && n >= 0 ? n : DEFAULT_TAIL);
    setSince(draftSince.trim());
  };

  return (
    <section class="card logs-card" aria-label="Container logs">
      <form class="log-toolbar" onSubmit={apply} aria-label="Log options">
        <SelectField
          label="Service"
          class="compact"
          value={service}
          onValue={setService}
          options={(names.length ? names : [service]).map((n) => ({ value: n, label: n }))}
        />
        <div class="field compact narrow">
          <label for="logs-tail">Lines of history</label>
          <input
            id="logs-tail"
            type="number"
            min={0}
            step={1}
            inputMode="numeric"
            value={draftTail}
            onInput={(e) => setDraftTail(e.currentTarget.value)}
            onBlur={() => apply()}
          />
        </div>
        <div class="field compact narrow">
          <label for="logs-since">Since</label>
          <input
            id="logs-since"
            placeholder="10m"
            autoComplete="off"
            value={draftSince}
            onInput={(e) => setDraftSince(e.currentTarget.value)}
            onBlur={() => apply()}
          />
        </div>
        <label class="check">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.currentTarget.checked)} />
          Follow
        </label>
        <TextField
          label="Filter"
          class="compact grow"
          type="search"
          placeholder="text to look for"
          autoComplete="off"
          value={filter}
          onValue={setFilter}
        />
      </form>
      <div class="log-status-row">
        <p class={`stream-status state-${logs.status.state}`} role="status">
          <span class="dot" aria-hidden="true" />
          {statusText(logs.status, follow)}
        </p>
        {logs.status.state === "closed" && (
          <button type="button" class="btn small" onClick={logs.reconnect}>
            Reconnect
          </button>
        )}
        <span class="muted small">
          {needle ? `${matching.length} of ${logs.lines.length} lines match` : `${logs.lines.length} lines`}
        </span>
      </div>
      <ErrorText error={logs.error} />
      <div
        class="log-view"
        ref={view}
        role="log"
        aria-live="off"
        aria-label={`Log lines of ${service}`}
        onScroll={(e) => {
          const el = e.currentTarget;
          stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
        }}
      >
        {shown.map((l) => (
          <div key={l.n} class={`log-line stream-${l.stream}`} title={l.ts}>
            {l.ts && <span class="log-ts">{clock(l.ts)} </span>}
            {l.stream === "stderr" && <span class="sr-only">stderr: </span>}
            {l.line}
          </div>
        ))}
        {shown.length === 0 && <div class="muted">{needle ? "No line matches the filter." : "No log lines yet."}</div>}
      </div>
    </section>
  );
}
