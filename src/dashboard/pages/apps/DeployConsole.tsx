/**
 * A terminal-like panel with the output of one deploy or action: a badge with the compose action on each line,
 * follows the end unless the reader scrolled up, and the outcome once the run ended.
 */
import { useLayoutEffect, useRef } from "preact/hooks";
import { ErrorText } from "../../components/Field";
import { Icon } from "../../components/icons";
import { formatTime } from "../../format";
import { Link } from "../../router";
import { ResultBadge } from "./badges";
import type { RunResult, RunState } from "./useDeployRun";

const RESULT_WORDS: Record<string, string> = {
  succeeded: "succeeded",
  failed: "failed",
  cancelled: "was cancelled",
  interrupted: "was interrupted",
  unknown: "ended",
};

/** "Deploy succeeded", "Stop failed" ... */
export function outcomeText(label: string, r: RunResult): string {
  return `${label} ${RESULT_WORDS[r.status] ?? r.status}`;
}

function Outcome({ state }: { state: RunState }) {
  const r = state.result;
  if (!r) return null;
  const ok = r.status === "succeeded";
  return (
    <div class={`run-outcome ${ok ? "ok" : "bad"}`} role="status">
      <strong>{outcomeText(state.label, r)}</strong>
      {r.error && <span class="run-error">{r.error}</span>}
      {r.rolledBack && (
        <span class="run-rollback">
          {r.rolledBack.status === "succeeded"
            ? `Rolled back to the last good version${r.rolledBack.version ? ` (version ${r.rolledBack.version})` : ""}`
            : `The rollback to the last good version ${r.rolledBack.status}${r.rolledBack.error ? `: ${r.rolledBack.error}` : ""}`}
        </span>
      )}
    </div>
  );
}

function phaseText(state: RunState): string {
  switch (state.phase) {
    case "starting":
      return "Starting…";
    case "running":
      return state.stream.state === "waiting" ? "Running (reconnecting to the output…)" : "Running…";
    case "finishing":
      return "Finishing…";
    default:
      return "";
  }
}

export interface DeployConsoleProps {
  state: RunState;
  /** Smaller panel (above the tabs). */
  compact?: boolean;
  onDismiss?(): void;
  /** Where the full output is, shown on the compact panel. */
  fullHref?: string;
}

/** The panel; nothing while idle. */
export function DeployConsole({ state, compact, onDismiss, fullHref }: DeployConsoleProps) {
  const view = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  useLayoutEffect(() => {
    const el = view.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  });
  if (state.phase === "idle") return null;
  if (state.phase === "refused") {
    return (
      <section class={`card run ${compact ? "compact" : ""}`} aria-label={`${state.label} output`}>
        <div class="run-head">
          <h2>{state.label} refused</h2>
          {onDismiss && (
            <button type="button" class="icon-btn small" aria-label="Dismiss" onClick={onDismiss}>
              <Icon name="x" />
            </button>
          )}
        </div>
        <ErrorText error={state.refusal} />
      </section>
    );
  }
  const busy = state.phase !== "done";
  return (
    <section class={`card run ${compact ? "compact" : ""}`} aria-label={`${state.label} output`} aria-busy={busy}>
      <div class="run-head">
        <h2>
          {state.label}
          {state.deployId !== null && <span class="muted small"> #{state.deployId}</span>}
        </h2>
        {busy ? (
          <span class="run-phase">
            <span class="spinner" aria-hidden="true" />
            {phaseText(state)}
          </span>
        ) : (
          state.result && <ResultBadge status={state.result.status} />
        )}
        <span class="run-tools">
          {fullHref && (
            <Link href={fullHref} class="small">
              Full output
            </Link>
          )}
          {onDismiss && !busy && (
            <button type="button" class="icon-btn small" aria-label="Dismiss" onClick={onDismiss}>
              <Icon name="x" />
            </button>
          )}
        </span>
      </div>
      <div
        class={`terminal ${compact ? "short" : ""}`}
        ref={view}
        role="log"
        aria-label={`${state.label} output lines`}
        onScroll={(e) => {
          const el = e.currentTarget;
          stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
        }}
      >
        {state.lines.map((l) => (
          <div key={l.n} class={`term-line${l.final ? " final" : ""}`} title={formatTime(l.timestamp)}>
            <span class={`term-act act-${l.action}`}>{l.action}</span>
            <span class="term-text">{l.output}</span>
          </div>
        ))}
        {state.lines.length === 0 && <div class="term-line muted">{busy ? "Waiting for output…" : "No output."}</div>}
      </div>
      <Outcome state={state} />
    </section>
  );
}
