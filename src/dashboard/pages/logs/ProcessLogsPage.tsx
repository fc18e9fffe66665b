/**
 * Live process logs (super-admin): the server's buffer, then new lines as they are written. Follows the end
 * unless paused (or scrolled up); a filter box narrows what is shown; the stream reconnects with backoff.
 */

import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { TextField } from "../../components/Field";
import { Icon } from "../../components/icons";
import type { StreamStatus } from "../../ws";
import { levelOf } from "./buffer";
import { useLogStream } from "./useLogStream";

const MAX_SHOWN = 2000;

function statusText(s: StreamStatus): string {
  switch (s.state) {
    case "connecting":
      return "Connecting…";
    case "open":
      return "Live";
    case "waiting":
      return `Disconnected, reconnecting in ${Math.round(s.retryInMs / 1000)} s`;
    case "closed":
      return "Stream ended";
  }
}

/** The process logs page. */
export function ProcessLogsPage() {
  const { lines, status, received } = useLogStream();
  const [filter, setFilter] = useState("");
  const [following, setFollowing] = useState(true);
  const [seenAtPause, setSeenAtPause] = useState(0);
  const view = useRef<HTMLDivElement>(null);

  const needle = filter.trim().toLowerCase();
  const matching = needle ? lines.filter((l) => l.text.toLowerCase().includes(needle)) : lines;
  const shown = matching.length > MAX_SHOWN ? matching.slice(-MAX_SHOWN) : matching;

  useLayoutEffect(() => {
    const el = view.current;
    if (!el || !following) return;
    el.scrollTop = el.scrollHeight;
  });

  const setFollow = (on: boolean) => {
    setFollowing(on);
    if (!on) setSeenAtPause(received);
  };

  const onScroll = () => {
    const el = view.current;
    if (!el) return;
    // scrolling we do ourselves always ends at the bottom, so only the user's scrolling changes the mode
    const atEnd = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
    if (following && !atEnd) setFollow(false);
    else if (!following && atEnd) setFollow(true);
  };

  const pending = following ? 0 : received - seenAtPause;

  return (
    <>
      <div class="page-head">
        <h1>Process logs</h1>
        <p class="muted">What the Sundeck server itself is writing, live.</p>
      </div>
      <section class="card logs-card" aria-label="Process logs">
        <div class="log-toolbar">
          <TextField
            label="Filter"
            class="compact grow"
            type="search"
            placeholder="text to look for"
            autoComplete="off"
            value={filter}
            onValue={setFilter}
          />
          <button type="button" class="btn" aria-pressed={!following} onClick={() => setFollow(!following)}>
            <Icon name={following ? "pause" : "play"} />
            {following ? "Pause" : "Resume"}
          </button>
          <p class={`stream-status state-${status.state}`} role="status">
            <span class="dot" aria-hidden="true" />
            {statusText(status)}
          </p>
        </div>
        <p class="muted small" aria-live="off">
          {needle ? `${matching.length} of ${lines.length} lines match` : `${lines.length} lines`}
          {matching.length > MAX_SHOWN && ` (showing the last ${MAX_SHOWN})`}
        </p>
        <div class="log-view" ref={view} onScroll={onScroll} role="log" aria-live="off" aria-label="Process log lines">
          {shown.map((l) => (
            <div key={l.n} class={`log-line lvl-${levelOf(l.text)}`}>
              {l.text}
            </div>
          ))}
          {shown.length === 0 && <div class="muted">{needle ? "No line matches the filter." : "No log lines yet."}</div>}
        </div>
        {!following && (
          <button type="button" class="btn small resume" onClick={() => setFollow(true)}>
            {pending > 0 ? `${pending} new ${pending === 1 ? "line" : "lines"}, jump to the end` : "Jump to the end"}
          </button>
        )}
      </section>
    </>
  );
}
