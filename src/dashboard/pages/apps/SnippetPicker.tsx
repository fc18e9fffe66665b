/**
 * "Add a service" for the compose editors: a dialog listing the embedded service snippets (Postgres, Redis, MinIO…);
 * the one chosen is fetched with values for its variables (secrets generated on the server) and handed back, for the
 * editor to merge into its text and its .env.
 */
import { useState } from "preact/hooks";
import { Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/Field";
import { useResource } from "../../hooks";
import { applySnippet, type Inserted, type SnippetWithValues, snippetsApi } from "../../snippets";
import { iconSrc } from "../../templates";

function Picker({ onPick }: { onPick(s: SnippetWithValues): void }) {
  const list = useResource(() => snippetsApi.list());
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const pick = async (id: string) => {
    setError(null);
    setBusy(id);
    try {
      onPick(await snippetsApi.withValues(id));
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(null);
    }
  };
  return (
    <>
      <ErrorText error={list.error ?? error} />
      {!list.data && list.loading && <p class="muted">Loading…</p>}
      <ul class="snippet-list" aria-label="Services">
        {(list.data ?? []).map((s) => (
          <li key={s.id}>
            <button type="button" class="snippet-choice" disabled={busy !== null} onClick={() => void pick(s.id)}>
              <img class="template-icon" src={iconSrc(s.icon)} alt="" width={32} height={32} />
              <span>
                <strong>{s.name}</strong>
                <span class="muted small snippet-description">{s.description}</span>
              </span>
            </button>
          </li>
        ))}
      </ul>
    </>
  );
}

/** The button and its dialog. */
export function SnippetPicker({ onPick }: { onPick(s: SnippetWithValues): void }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" class="btn small" onClick={() => setOpen(true)}>
        Add a service…
      </button>
      <Dialog open={open} title="Add a service" onClose={() => setOpen(false)}>
        <p class="muted small">
          Its service and volumes are added to the compose file, and its settings to the .env (passwords generated). Nothing is
          deployed until you save.
        </p>
        {open && (
          <Picker
            onPick={(s) => {
              setOpen(false);
              onPick(s);
            }}
          />
        )}
        <div class="actions">
          <button type="button" class="btn" onClick={() => setOpen(false)}>
            Cancel
          </button>
        </div>
      </Dialog>
    </>
  );
}

export interface AddServiceProps {
  /** The editor's text now. */
  text: string;
  /** The .env's names (kept as they are). */
  keys(): ReadonlySet<string> | Promise<ReadonlySet<string>>;
  onInserted(r: Inserted): void;
  /** The text could not take the snippet (it is not a compose file): the reason, for the editor's problem list. */
  onProblem(message: string): void;
  /** Said after what was added. */
  suffix?: string;
}

/** The compose editors' "Add a service…" with the line saying what it added (remounted to clear it). */
export function AddService({ text, keys, onInserted, onProblem, suffix }: AddServiceProps) {
  const [note, setNote] = useState<string | null>(null);
  const pick = async (snippet: SnippetWithValues) => {
    try {
      const r = applySnippet(text, snippet, await keys());
      setNote(suffix ? `${r.message} ${suffix}` : r.message);
      onInserted(r);
    } catch (e) {
      setNote(null);
      onProblem((e as Error).message);
    }
  };
  return (
    <div class="editor-tools">
      <SnippetPicker onPick={(s) => void pick(s)} />
      {note && (
        <p class="muted small editor-note" role="status">
          {note}
        </p>
      )}
    </div>
  );
}
