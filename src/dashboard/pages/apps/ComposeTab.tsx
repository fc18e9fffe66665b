/**
 * The app's compose file in an editor. Saving is deploying: the edited file goes to POST /api/apps/deploy with the
 * current env kept; a refusal (400) is shown inline and changes nothing. Viewers read it only.
 * "Add a service…" inserts a snippet (Postgres, Redis…): its variables the .env lacks are added to it by that save.
 */
import { useEffect, useState } from "preact/hooks";
import { api } from "../../api";
import { CodeEditor } from "../../components/CodeEditor";
import { ErrorText } from "../../components/Field";
import { useResource } from "../../hooks";
import type { AppView } from "../../types";
import { ComposeChecks, Refusal, SERVER_CHECK_NOTE } from "./Checks";
import { AddService } from "./SnippetPicker";
import type { DeployRun } from "./useDeployRun";
import { composeProblems, type Problem } from "./validate";

export interface ComposeTabProps {
  app: AppView;
  run: DeployRun;
  canEdit: boolean;
  busy: boolean;
}

/** The values of an env answer (null for a value the caller may not read is left out). */
function definedOf(env: Record<string, string | null>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== null));
}

/** The tab. */
export function ComposeTab({ app, run, canEdit, busy }: ComposeTabProps) {
  const slug = app.slug;
  const file = useResource(() => api.apps.compose(slug), [slug]);
  const [edit, setEdit] = useState<string | null>(null);
  const [problems, setProblems] = useState<Problem[] | null>(null);
  const [refusal, setRefusal] = useState<string | null>(null);
  /** Variables of inserted snippets, added to the .env by the next save. */
  const [extraEnv, setExtraEnv] = useState<Record<string, string>>({});
  /** Remounts "Add a service…", clearing its note, once the insertions are saved or reverted. */
  const [addKey, setAddKey] = useState(0);
  const saved = file.data?.compose ?? "";
  const text = edit ?? saved;
  const dirty = edit !== null && edit !== saved;

  // a deploy that ended (here or elsewhere) may have changed the file: show it unless the user is editing
  useEffect(() => {
    if (run.state.finished > 0 && !dirty) void file.reload();
  }, [run.state.finished]);

  const check = () => {
    const p = composeProblems(text);
    setProblems(p);
    return p.length === 0;
  };
  const save = async (e: Event) => {
    e.preventDefault();
    setRefusal(null);
    if (!check()) return;
    let reason: string | null = null;
    const adds = Object.keys(extraEnv).length > 0;
    const ok = await run.start(slug, "Deploy", async () => {
      try {
        // the .env as it is now, with the snippets' variables it still lacks (a value set meanwhile wins)
        const env = adds ? { ...extraEnv, ...definedOf(await api.apps.env(slug)) } : undefined;
        return await api.apps.deploy(slug, text, env);
      } catch (err) {
        reason = (err as Error).message;
        throw err;
      }
    });
    if (ok) {
      setProblems(null);
      setExtraEnv({});
      setAddKey((k) => k + 1);
      setEdit(null);
      void file.reload();
    } else setRefusal(reason);
  };

  return (
    <form class="card app-form" aria-label="Compose file" onSubmit={save}>
      <div class="card-head">
        <h2>Compose file</h2>
        {file.data && (
          <span class="muted small">
            {dirty ? "edited, not saved" : "the app's file"} · <code title={file.data.hash}>{file.data.hash.slice(0, 10)}</code>
          </span>
        )}
      </div>
      <ErrorText error={file.error} />
      {!file.data && file.loading && <p class="muted">Loading…</p>}
      {file.data && (
        <>
          <CodeEditor
            label={`Compose file of ${slug}`}
            value={text}
            readOnly={!canEdit}
            onValue={(v) => {
              setEdit(v);
              if (problems) setProblems(null);
            }}
            marked={(problems ?? []).flatMap((p) => (p.line ? [p.line] : []))}
            hint={canEdit ? `Saving deploys it with the current env. ${SERVER_CHECK_NOTE}` : "Read only."}
          />
          {canEdit && (
            <AddService
              key={addKey}
              text={text}
              keys={async () => new Set([...Object.keys(await api.apps.env(slug)), ...Object.keys(extraEnv)])}
              suffix="Saving adds the new variables to the app's .env."
              onInserted={(r) => {
                setEdit(r.text);
                setExtraEnv({ ...extraEnv, ...r.env });
                setProblems(null);
              }}
              onProblem={(message) => setProblems([{ message }])}
            />
          )}
          <ComposeChecks problems={problems} />
          <Refusal reason={refusal} />
          {canEdit && (
            <div class="actions">
              <button
                type="button"
                class="btn"
                disabled={!dirty}
                onClick={() => {
                  setEdit(null);
                  setExtraEnv({});
                  setAddKey((k) => k + 1);
                }}
              >
                Revert
              </button>
              <button type="button" class="btn" onClick={() => check()}>
                Validate
              </button>
              <button type="submit" class="btn primary" disabled={busy || !dirty}>
                Save and deploy
              </button>
            </div>
          )}
        </>
      )}
    </form>
  );
}
