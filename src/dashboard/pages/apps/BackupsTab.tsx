/**
 * The Backups tab (`?tab=backups`): what the server detected in the app's services, the backup configs (create, edit,
 * delete, Run now), the run history with live progress (polled every 1.5 s while a run or restore is running, every
 * 10 s otherwise, and not while the page is hidden), downloads, restore from a run or from a file, and the restores.
 * Viewers read the lists only: no changes, runs, restores or downloads (an archive holds the app's data, whose env
 * values they do not see either). The server checks every role anyway.
 */
import { useState } from "preact/hooks";
import { api } from "../../api";
import {
  anyRunning,
  BACKUPS_BUSY_POLL_MS,
  BACKUPS_IDLE_POLL_MS,
  cronHint,
  runDuration,
  shortSha,
  targetSummary,
} from "../../backups";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { ErrorText } from "../../components/Field";
import { formatTime, humanize, relativeTime } from "../../format";
import { useAction, useResource, useVisibleInterval } from "../../hooks";
import { formatSize } from "../../metrics";
import { toast } from "../../toast";
import type { AppView, BackupConfig, BackupRestore, BackupRun } from "../../types";
import { BackupConfigDialog } from "./BackupConfigDialog";
import { RestoreDialog, UploadRestore } from "./BackupRestore";
import { ResultBadge } from "./badges";

const When = ({ iso }: { iso: string | null }) =>
  iso ? (
    <time dateTime={iso} title={formatTime(iso)}>
      {relativeTime(iso)}
    </time>
  ) : null;

function ConfigRow({
  c,
  canEdit,
  onEdit,
  onDelete,
  onRan,
}: {
  c: BackupConfig;
  canEdit: boolean;
  onEdit(): void;
  onDelete(): void;
  onRan(): void;
}) {
  const run = useAction(async () => {
    const r = await api.backups.run(c.id);
    toast(`Backup run #${r.run_id} started`);
    onRan();
  });
  const name = `${c.service} (${c.strategy})`;
  return (
    <tr aria-label={`Backup ${name}`}>
      <th scope="row">
        {c.service} <span class="muted">{c.strategy}</span>
      </th>
      <td data-label="Target">{targetSummary(c.target)}</td>
      <td data-label="Schedule">
        {c.schedule ? (
          <span>
            <code>{c.schedule}</code> <span class="muted small">{cronHint(c.schedule)}</span>
            {c.timezone && <span class="muted small"> ({c.timezone})</span>}
          </span>
        ) : (
          <span class="muted">by hand</span>
        )}
      </td>
      <td data-label="Next run">{c.enabled ? <When iso={c.next_run_at} /> : <span class="muted">disabled</span>}</td>
      <td data-label="Keeps">
        {[c.retention_count != null && `last ${c.retention_count}`, c.retention_days != null && `${c.retention_days} days`]
          .filter(Boolean)
          .join(", ") || <span class="muted">all</span>}
      </td>
      <td class="cell-actions">
        {canEdit && (
          <div class="row-buttons">
            <button type="button" class="btn small primary" disabled={run.busy} onClick={() => run.run()}>
              {run.busy ? "Starting…" : "Run now"}
              <span class="sr-only"> {name}</span>
            </button>
            <button type="button" class="btn small" onClick={onEdit}>
              Edit<span class="sr-only"> {name}</span>
            </button>
            <button type="button" class="btn small danger-outline" onClick={onDelete}>
              Delete<span class="sr-only"> {name}</span>
            </button>
          </div>
        )}
        <ErrorText error={run.error} />
      </td>
    </tr>
  );
}

function RunsTable({ runs, canEdit, onRestore }: { runs: BackupRun[]; canEdit: boolean; onRestore(r: BackupRun): void }) {
  return (
    <div class="table-wrap">
      <table class="table stack" aria-label="Backup runs">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Backup</th>
            <th scope="col">Status</th>
            <th scope="col">Started</th>
            <th scope="col">Took</th>
            <th scope="col">Size</th>
            <th scope="col">SHA-256</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <tr key={r.id} aria-label={`Run ${r.id}`} data-status={r.status}>
              <th scope="row">#{r.id}</th>
              <td data-label="Backup">
                <span>
                  {r.service ?? "Sundeck"} <span class="muted">{r.strategy}</span>
                  <span class="muted small">
                    {" "}
                    · {humanize(r.trigger)}, {r.target_kind}
                  </span>
                </span>
              </td>
              <td data-label="Status">
                <ResultBadge status={r.status} />
                {r.status === "running" && r.progress_bytes != null && (
                  <span class="small" aria-live="polite">
                    {" "}
                    {formatSize(r.progress_bytes)} written
                  </span>
                )}
                {r.error && <p class="error-inline">{r.error}</p>}
              </td>
              <td data-label="Started">
                <When iso={r.started_at} />
              </td>
              <td data-label="Took">{runDuration(r)}</td>
              <td data-label="Size">{r.size_bytes != null ? formatSize(r.size_bytes) : ""}</td>
              <td data-label="SHA-256">
                {r.sha256 && (
                  <code title={r.sha256} class="mono">
                    {shortSha(r.sha256)}
                  </code>
                )}
              </td>
              <td class="cell-actions">
                {canEdit && r.status === "succeeded" && (
                  <div class="row-buttons">
                    <a class="btn small" href={api.backups.downloadHref(r.id)} download>
                      Download<span class="sr-only"> run {r.id}</span>
                    </a>
                    <button type="button" class="btn small danger-outline" onClick={() => onRestore(r)}>
                      Restore<span class="sr-only"> run {r.id}</span>
                    </button>
                  </div>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function RestoresTable({ restores }: { restores: BackupRestore[] }) {
  return (
    <div class="table-wrap">
      <table class="table stack" aria-label="Restores">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">From</th>
            <th scope="col">Status</th>
            <th scope="col">Started</th>
            <th scope="col">Took</th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {restores.map((r) => (
            <tr key={r.id} aria-label={`Restore ${r.id}`} data-status={r.status}>
              <th scope="row">#{r.id}</th>
              <td data-label="From">
                <span>
                  {r.run_id != null ? `run #${r.run_id}` : "uploaded file"} <span class="muted">{r.strategy}</span>
                  {(r.container ?? r.service) && <span class="muted small"> · {r.container ?? r.service}</span>}
                </span>
              </td>
              <td data-label="Status">
                <ResultBadge status={r.status} />
                {r.bytes != null && <span class="small"> {formatSize(r.bytes)}</span>}
              </td>
              <td data-label="Started">
                <When iso={r.started_at} />
              </td>
              <td data-label="Took">{runDuration(r)}</td>
              <td data-label="Error" class="error-inline">
                {r.error}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The tab. */
export function BackupsTab({ app, canEdit }: { app: AppView; canEdit: boolean }) {
  const slug = app.slug;
  const detected = useResource(() => api.backups.detected(slug), [slug]);
  const configs = useResource(() => api.backups.configs(slug), [slug]);
  const runs = useResource(() => api.backups.runs(slug), [slug]);
  const restores = useResource(() => api.backups.restores(slug), [slug]);
  const [editing, setEditing] = useState<BackupConfig | "new" | null>(null);
  const [deleting, setDeleting] = useState<BackupConfig | null>(null);
  const [restoring, setRestoring] = useState<BackupRun | null>(null);
  const busy = anyRunning(runs.data) || anyRunning(restores.data);
  const refresh = async () => {
    await Promise.all([runs.reload(), restores.reload()]);
  };
  // fast while something runs (progress), slow otherwise (a scheduled run appears within 10 s)
  useVisibleInterval(refresh, busy ? BACKUPS_BUSY_POLL_MS : BACKUPS_IDLE_POLL_MS);
  useVisibleInterval(configs.reload, BACKUPS_IDLE_POLL_MS * 3);

  const services = app.services.map((s) => ({ service: s.name, containers: s.containers.map((c) => c.name) }));
  const list = configs.data ?? [];

  return (
    <>
      <section class="card" aria-labelledby="backups-detected-title">
        <h2 id="backups-detected-title">Detected</h2>
        <ErrorText error={detected.error} />
        {detected.data?.length === 0 && <p class="muted">Nothing to back up was recognised in this app's services.</p>}
        {detected.data && detected.data.length > 0 && (
          <ul class="plain-list" aria-label="Detected strategies">
            {detected.data.map((d) => (
              <li key={`${d.service}-${d.strategy}`}>
                <strong>{d.service}</strong>: {d.strategy} <span class="muted small">({d.reason})</span>
              </li>
            ))}
          </ul>
        )}
      </section>

      <section class="card" aria-labelledby="backups-configs-title">
        <div class="card-head">
          <h2 id="backups-configs-title">Backups</h2>
          {canEdit && (
            <button type="button" class="btn primary small" onClick={() => setEditing("new")}>
              New backup
            </button>
          )}
        </div>
        <ErrorText error={configs.error} />
        {!configs.data && configs.loading && <p class="muted">Loading…</p>}
        {configs.data?.length === 0 && (
          <p class="muted">No backups configured{canEdit ? ": add one for a detected service above." : "."}</p>
        )}
        {list.length > 0 && (
          <div class="table-wrap">
            <table class="table stack" aria-label="Backup configs">
              <thead>
                <tr>
                  <th scope="col">Service</th>
                  <th scope="col">Target</th>
                  <th scope="col">Schedule</th>
                  <th scope="col">Next run</th>
                  <th scope="col">Keeps</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.map((c) => (
                  <ConfigRow
                    key={c.id}
                    c={c}
                    canEdit={canEdit}
                    onEdit={() => setEditing(c)}
                    onDelete={() => setDeleting(c)}
                    onRan={() => void refresh()}
                  />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section class="card" aria-labelledby="backups-runs-title">
        <div class="card-head">
          <h2 id="backups-runs-title">Runs</h2>
          <span class="muted small" aria-live="polite">
            {busy ? "running: refreshing every 1.5 s" : ""}
          </span>
        </div>
        <ErrorText error={runs.error} />
        {runs.data?.length === 0 && <p class="muted">No backup has run yet.</p>}
        {runs.data && runs.data.length > 0 && <RunsTable runs={runs.data} canEdit={canEdit} onRestore={setRestoring} />}
      </section>

      <section class="card" aria-labelledby="backups-restores-title">
        <h2 id="backups-restores-title">Restores</h2>
        <ErrorText error={restores.error} />
        {restores.data?.length === 0 && <p class="muted">Nothing has been restored.</p>}
        {restores.data && restores.data.length > 0 && <RestoresTable restores={restores.data} />}
      </section>

      {canEdit && <UploadRestore slug={slug} services={services} onStarted={() => void refresh()} />}

      {editing !== null && (
        <BackupConfigDialog
          slug={slug}
          config={editing === "new" ? null : editing}
          detected={detected.data ?? []}
          services={app.services.map((s) => s.name)}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            void configs.reload();
          }}
        />
      )}
      {restoring && (
        <RestoreDialog
          slug={slug}
          run={restoring}
          onClose={() => setRestoring(null)}
          onStarted={() => {
            setRestoring(null);
            void refresh();
          }}
        />
      )}
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete the backup of ${deleting?.service ?? ""}?`}
        confirmLabel="Delete backup"
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          if (!deleting) return;
          await api.backups.remove(deleting.id);
          toast(`Backup of ${deleting.service} deleted`);
          await configs.reload();
        }}
      >
        <p>It stops running. Its past runs stay in the history.</p>
      </ConfirmDialog>
    </>
  );
}
