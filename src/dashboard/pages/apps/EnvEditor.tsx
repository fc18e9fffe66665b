/**
 * Key/value rows of an app's .env: add, remove, values masked with a reveal toggle per row (and one for all).
 * Read-only mode (viewers) lists the names only: the server does not send them the values.
 */
import { useState } from "preact/hooks";
import { Icon } from "../../components/icons";
import { type EnvRow, emptyRow, envProblems } from "./validate";

export interface EnvEditorProps {
  rows: EnvRow[];
  onRows(rows: EnvRow[]): void;
  /** Names only, no values and no editing. */
  readOnly?: boolean;
  legend?: string;
}

/** The editor. */
export function EnvEditor({ rows, onRows, readOnly, legend = "Environment" }: EnvEditorProps) {
  const [shown, setShown] = useState<Set<number>>(new Set());
  const [showAll, setShowAll] = useState(false);
  const problems = envProblems(rows);

  if (readOnly) {
    return (
      <section class="env-readonly" aria-label={legend}>
        {rows.length === 0 ? (
          <p class="muted">No variables.</p>
        ) : (
          <ul class="env-keys" aria-label="Variables">
            {rows.map((r) => (
              <li key={r.id}>
                <code>{r.key}</code> <span class="muted">value hidden</span>
              </li>
            ))}
          </ul>
        )}
      </section>
    );
  }

  const update = (id: number, patch: Partial<EnvRow>) => onRows(rows.map((r) => (r.id === id ? { ...r, ...patch } : r)));
  const toggle = (id: number) => {
    const next = new Set(shown);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setShown(next);
  };

  return (
    <fieldset class="env-editor">
      <legend>{legend}</legend>
      {rows.length === 0 && <p class="muted small">No variables. The compose file can read them as ${"{NAME}"}.</p>}
      <ul class="env-rows">
        {rows.map((r, i) => {
          const name = r.key.trim() || `variable ${i + 1}`;
          const visible = showAll || shown.has(r.id);
          const problem = problems.get(r.id);
          return (
            <li key={r.id} class="env-row">
              <input
                class="env-key mono"
                aria-label={`Name of variable ${i + 1}`}
                placeholder="NAME"
                value={r.key}
                autoComplete="off"
                spellcheck={false}
                aria-invalid={problem ? true : undefined}
                onInput={(e) => update(r.id, { key: e.currentTarget.value })}
              />
              <input
                class="env-value mono"
                type={(visible ? "text" : "password") as "text"}
                aria-label={`Value of ${name}`}
                placeholder="value"
                value={r.value}
                autoComplete="off"
                spellcheck={false}
                onInput={(e) => update(r.id, { value: e.currentTarget.value })}
              />
              <button
                type="button"
                class="icon-btn"
                aria-label={`Show value of ${name}`}
                aria-pressed={visible}
                title={visible ? "Hide value" : "Show value"}
                disabled={showAll}
                onClick={() => toggle(r.id)}
              >
                <Icon name={visible ? "eyeOff" : "eye"} />
              </button>
              <button
                type="button"
                class="icon-btn"
                aria-label={`Remove ${name}`}
                title="Remove"
                onClick={() => onRows(rows.filter((x) => x.id !== r.id))}
              >
                <Icon name="x" />
              </button>
              {problem && <p class="env-problem error-inline small">{problem}</p>}
            </li>
          );
        })}
      </ul>
      <div class="env-tools">
        <button type="button" class="btn small" onClick={() => onRows([...rows, emptyRow()])}>
          Add variable
        </button>
        {rows.length > 0 && (
          <button type="button" class="btn small" aria-pressed={showAll} onClick={() => setShowAll(!showAll)}>
            {showAll ? "Hide values" : "Show values"}
          </button>
        )}
      </div>
    </fieldset>
  );
}
