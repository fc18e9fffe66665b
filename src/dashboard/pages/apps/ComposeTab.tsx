/**
 * The app's compose file in an editor. Saving is deploying: the edited file goes to POST /api/apps/deploy with the
 * current env kept; a refusal (400) is shown inline and changes nothing. Viewers read it only.
 */
import { useEffect, useState } from "preact/hooks";
import { api } from "../../api";
import { CodeEditor } from "../../components/CodeEditor";
import { ErrorText } from "../../components/Field";
import { useResource } from "../../hooks";
import type { AppView } from "../../types";
import { ComposeChecks, Refusal, SERVER_CHECK_NOTE } from "./Checks";
import type { DeployRun } from "./useDeployRun";
import { composeProblems, type Problem } from "./validate";

export interface ComposeTabProps {
  app: AppView;
  run: DeployRun;
  canEdit: boolean;
  busy: boolean;
}

/** The tab. */
export function ComposeTab({ app, run, canEdit, busy }: ComposeTabProps) {
  const slug = app.slug;
  const file = useResource(() => api.apps.compose(slug), [slug]);
  const [edit, setEdit] = useState<string | null>(null);
  const [problems, setProblems] = useState<Problem[] | null>(null);
  const [refusal, setRefusal] = useState<string | null>(null);
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
    const ok = await run.start(slug, "Deploy", () =>
      api.apps.deploy(slug, text).catch((err: Error) => {
        reason = err.message;
        throw err;
      }),
    );
    if (ok) {
      setProblems(null);
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
          <ComposeChecks problems={problems} />
          <Refusal reason={refusal} />
          {canEdit && (
            <div class="actions">
              <button type="button" class="btn" disabled={!dirty} onClick={() => setEdit(null)}>
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
