/**
 * Kept compose versions, newest first: pick two (or one and the current) to see a line diff; roll back to any of them
 * (the version's compose and env become the desired state again and are deployed).
 */
import { useState } from "preact/hooks";
import { api } from "../../api";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { ErrorText } from "../../components/Field";
import { formatTime, relativeTime, sourceLabel } from "../../format";
import { useResource } from "../../hooks";
import type { AppVersion, AppView } from "../../types";
import type { DeployRun } from "./useDeployRun";
import { VersionDiff } from "./VersionDiff";

export interface VersionsTabProps {
  app: AppView;
  run: DeployRun;
  canEdit: boolean;
  busy: boolean;
}

/** The tab. */
export function VersionsTab({ app, run, canEdit, busy }: VersionsTabProps) {
  const slug = app.slug;
  const versions = useResource(() => api.apps.versions(slug), [slug, app.current_version?.id, run.state.finished]);
  const [picked, setPicked] = useState<number[]>([]);
  const [diff, setDiff] = useState<{ from: number; to: number } | null>(null);
  const [target, setTarget] = useState<AppVersion | null>(null);
  const list = versions.data ?? [];
  const current = list.find((v) => v.current);
  const byId = (id: number) => list.find((v) => v.id === id);

  const toggle = (id: number, on: boolean) =>
    setPicked((p) => (on ? [...p.filter((x) => x !== id), id].slice(-2) : p.filter((x) => x !== id)));
  const compareSelected = () => {
    const [x, y] = picked.map((id) => byId(id)!).sort((m, n) => m.version - n.version);
    setDiff({ from: x.id, to: y.id });
  };
  const rollback = async () => {
    const v = target!;
    let refused = null as Error | null;
    const ok = await run.start(slug, `Rollback to version ${v.version}`, () =>
      api.apps.rollback(slug, v.id).catch((e: Error) => {
        refused = e;
        throw e;
      }),
    );
    if (!ok && refused) throw refused;
  };

  return (
    <>
      <section class="card" aria-labelledby="versions-title">
        <div class="card-head">
          <h2 id="versions-title">Versions</h2>
          <button type="button" class="btn small" disabled={picked.length !== 2} onClick={compareSelected}>
            Compare selected
          </button>
        </div>
        <p class="muted small">
          Every distinct compose file and env deployed is kept. Select two to compare them, or compare one with the current
          version.
        </p>
        <ErrorText error={versions.error} />
        {versions.data && list.length === 0 && <p class="muted">No versions yet.</p>}
        {list.length > 0 && (
          <div class="table-wrap">
            <table class="table stack" aria-label="Versions">
              <thead>
                <tr>
                  <th scope="col">Version</th>
                  <th scope="col">Compare</th>
                  <th scope="col">Result</th>
                  <th scope="col">Created</th>
                  <th scope="col">By</th>
                  <th scope="col">Hash</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.map((v) => (
                  <tr key={v.id} aria-label={`Version ${v.version}`} class={v.current ? "current-row" : undefined}>
                    <th scope="row">
                      Version {v.version}
                      {v.current && <span class="badge current">current</span>}
                    </th>
                    <td data-label="Compare">
                      <input
                        type="checkbox"
                        aria-label={`Select version ${v.version} to compare`}
                        checked={picked.includes(v.id)}
                        onChange={(e) => toggle(v.id, e.currentTarget.checked)}
                      />
                    </td>
                    <td data-label="Result">
                      {v.status ? (
                        <span class={`badge result result-${v.status}`}>{v.status}</span>
                      ) : (
                        <span class="muted">not deployed</span>
                      )}
                    </td>
                    <td data-label="Created">
                      <time dateTime={v.created_at} title={formatTime(v.created_at)}>
                        {relativeTime(v.created_at)}
                      </time>
                    </td>
                    <td data-label="By">
                      {v.created_by ?? "system"} <span class="muted">via {sourceLabel(v.source)}</span>
                    </td>
                    <td data-label="Hash">
                      <code title={v.hash}>{v.hash.slice(0, 10)}</code>
                    </td>
                    <td class="cell-actions">
                      <span class="row-actions">
                        {current && !v.current && (
                          <button
                            type="button"
                            class="btn small"
                            aria-label={`Compare version ${v.version} with current`}
                            onClick={() => setDiff({ from: v.id, to: current.id })}
                          >
                            Diff with current
                          </button>
                        )}
                        {canEdit && (
                          <button
                            type="button"
                            class="btn small"
                            aria-label={`Roll back to version ${v.version}`}
                            disabled={busy || v.current}
                            onClick={() => setTarget(v)}
                          >
                            Roll back
                          </button>
                        )}
                      </span>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {diff && <VersionDiff slug={slug} from={diff.from} to={diff.to} onClose={() => setDiff(null)} />}
      <ConfirmDialog
        open={target !== null}
        title={`Roll back to version ${target?.version ?? ""}?`}
        confirmLabel="Roll back"
        onConfirm={rollback}
        onClose={() => setTarget(null)}
      >
        <p>The compose file and env of version {target?.version} become the app's desired state again and are deployed now.</p>
      </ConfirmDialog>
    </>
  );
}
