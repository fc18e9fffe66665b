/**
 * The app's .env as key/value rows. Saving replaces it and the server redeploys; viewers see the names only (the
 * server sends them no values).
 */
import { useEffect, useState } from "preact/hooks";
import { api } from "../../api";
import { ErrorText } from "../../components/Field";
import { useResource } from "../../hooks";
import type { AppView } from "../../types";
import { Refusal } from "./Checks";
import { EnvEditor } from "./EnvEditor";
import type { DeployRun } from "./useDeployRun";
import { type EnvRow, envProblems, fromRows, toRows } from "./validate";

export interface EnvTabProps {
  app: AppView;
  run: DeployRun;
  canEdit: boolean;
  busy: boolean;
}

const same = (a: Record<string, unknown>, b: Record<string, unknown>) => {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
};

/** The tab. */
export function EnvTab({ app, run, canEdit, busy }: EnvTabProps) {
  const slug = app.slug;
  const env = useResource(() => api.apps.env(slug), [slug]);
  const [rows, setRows] = useState<EnvRow[]>([]);
  const [refusal, setRefusal] = useState<string | null>(null);
  const dirty = env.data !== undefined && !same(fromRows(rows), env.data);

  useEffect(() => {
    if (env.data) setRows(toRows(env.data));
  }, [env.data]);
  useEffect(() => {
    if (run.state.finished > 0 && !dirty) void env.reload();
  }, [run.state.finished]);

  const save = async (e: Event) => {
    e.preventDefault();
    setRefusal(null);
    if (envProblems(rows).size > 0) return;
    let reason: string | null = null;
    const ok = await run.start(slug, "Deploy (env change)", () =>
      api.apps.setEnv(slug, fromRows(rows)).catch((err: Error) => {
        reason = err.message;
        throw err;
      }),
    );
    if (ok) void env.reload();
    else setRefusal(reason);
  };

  return (
    <form class="card app-form" aria-label="Environment" onSubmit={save}>
      <h2>Environment</h2>
      <p class="muted small">
        The app's <code>.env</code>: the compose file reads these as <code>${"{NAME}"}</code>.{" "}
        {canEdit ? "Saving writes a new version and redeploys the app." : "Values are hidden from viewers."}
      </p>
      <ErrorText error={env.error} />
      {!env.data && env.loading && <p class="muted">Loading…</p>}
      {env.data && <EnvEditor rows={rows} onRows={setRows} readOnly={!canEdit} legend="Variables" />}
      <Refusal reason={refusal} />
      {canEdit && env.data && (
        <div class="actions">
          <button type="button" class="btn" disabled={!dirty} onClick={() => setRows(toRows(env.data!))}>
            Revert
          </button>
          <button type="submit" class="btn primary" disabled={busy || !dirty || envProblems(rows).size > 0}>
            Save and redeploy
          </button>
        </div>
      )}
    </form>
  );
}
