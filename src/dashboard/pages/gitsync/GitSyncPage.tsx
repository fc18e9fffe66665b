/**
 * The Git Sync page (/git): the worker's state, last sync, last commit and last error (polled every 3 s while
 * visible), the behind-by-N banner with Apply pending, Sync now, the conflicts kept local, and for a super-admin the
 * settings. Sync now and Apply pending are accepted by the server and done in the background; the status shows the
 * result on its next read.
 */
import { ErrorText } from "../../components/Field";
import { formatTime, relativeTime } from "../../format";
import { behindText, conflictText, type GitSyncStatus, gitApi, gitStateText, mayConfigureGitSync, shortSha } from "../../gitsync";
import { useAction, usePolled, useResource } from "../../hooks";
import { useSession } from "../../session";
import { toast } from "../../toast";
import { GitSettings } from "./GitSettings";

const POLL_MS = 3000;

const STATE_BADGE: Record<string, string> = { in_sync: "ok", behind: "warn", conflict: "bad", error: "bad" };

function When({ iso }: { iso: string | null }) {
  if (!iso) return <span class="muted">never</span>;
  return (
    <time dateTime={iso} title={formatTime(iso)}>
      {relativeTime(iso)}
    </time>
  );
}

function StatusCard({ s, onSync, busy }: { s: GitSyncStatus; onSync(): void; busy: boolean }) {
  return (
    <section class="card" aria-labelledby="git-status-title">
      <div class="card-head">
        <h2 id="git-status-title">Status</h2>
        {s.enabled && (
          <button type="button" class="btn" disabled={busy} onClick={onSync}>
            {busy ? "Syncing…" : "Sync now"}
          </button>
        )}
      </div>
      <dl class="facts" aria-label="Git sync status">
        <dt>State</dt>
        <dd>
          <span class={`badge ${STATE_BADGE[s.state] ?? ""}`} data-state={s.state}>
            {gitStateText(s)}
          </span>
          {s.running && <span class="muted small"> syncing now…</span>}
        </dd>
        <dt>Last sync</dt>
        <dd>
          <When iso={s.last_sync_at} />
        </dd>
        {s.last_attempt_at && s.last_attempt_at !== s.last_sync_at && (
          <>
            <dt>Last attempt</dt>
            <dd>
              <When iso={s.last_attempt_at} />
            </dd>
          </>
        )}
        <dt>Last commit</dt>
        <dd>
          {s.last_commit_sha ? (
            <code title={s.last_commit_sha}>{shortSha(s.last_commit_sha)}</code>
          ) : (
            <span class="muted">none</span>
          )}
        </dd>
        <dt>Last error</dt>
        <dd>{s.last_error ? <span class="error-inline">{s.last_error}</span> : <span class="muted">none</span>}</dd>
      </dl>
      {!s.enabled && <p class="muted">Git sync is off: nothing is mirrored to a remote.</p>}
    </section>
  );
}

/** The page at /git. */
export function GitSyncPage() {
  const { me } = useSession();
  const admin = mayConfigureGitSync(me);
  const status = usePolled(() => gitApi.status(), POLL_MS);
  const cfg = useResource(() => (admin ? gitApi.config() : Promise.reject(new Error("not a super-admin"))), [admin]);
  const sync = useAction(async () => {
    await gitApi.syncNow();
    toast("Sync started");
    await status.reload();
  });
  const apply = useAction(async () => {
    await gitApi.applyPending();
    toast("Applying the pending commits");
    await status.reload();
  });
  const s = status.data;
  const banner = s ? behindText(s) : null;
  const conflicts = s?.conflicts ?? [];
  const skipped = s?.skipped ?? [];

  return (
    <>
      <div class="page-head">
        <h1>Git Sync</h1>
        <p class="muted">
          App configuration mirrored to a git remote and back: compose files, env, sidecars and global settings.
        </p>
      </div>
      {banner && (
        <div class="warning git-banner" role="status">
          <span>{banner}</span>{" "}
          <button type="button" class="btn small" disabled={apply.busy} onClick={() => void apply.run()}>
            {apply.busy ? "Applying…" : "Apply pending"}
          </button>
        </div>
      )}
      <ErrorText error={apply.error} />
      <ErrorText error={status.error} />
      {!s && status.loading && <p class="muted">Loading…</p>}
      {s && <StatusCard s={s} busy={sync.busy} onSync={() => void sync.run()} />}
      <ErrorText error={sync.error} />
      {s?.enabled && (
        <section class="card" aria-labelledby="git-conflicts-title">
          <h2 id="git-conflicts-title">Conflicts</h2>
          {conflicts.length === 0 ? (
            <p class="muted">No conflicts: every remote change was applied or is pending.</p>
          ) : (
            <>
              <p class="hint">
                Local and remote changed the same file: the local state was kept and the remote change not applied.
              </p>
              <ul class="alert-entries" aria-label="Git sync conflicts">
                {conflicts.map((c, i) => (
                  <li key={`${c.detected_at ?? ""}-${i}`} class="alert-entry">
                    <span class="badge bad">conflict</span>
                    <span class="alert-entry-main">{conflictText(c)}</span>
                    {c.detected_at && (
                      <span class="muted small">
                        <When iso={c.detected_at} />
                      </span>
                    )}
                  </li>
                ))}
              </ul>
            </>
          )}
        </section>
      )}
      {s?.enabled && skipped.length > 0 && (
        <section class="card" aria-labelledby="git-skipped-title">
          <h2 id="git-skipped-title">Skipped from the remote</h2>
          <p class="hint">
            The last sync left these out of what the remote sent (unsafe names, files over the size limit, a commit that breaks a
            limit) and went on without them; local content was kept. Remove them from the remote.
          </p>
          <ul class="alert-entries" aria-label="Skipped from the remote">
            {skipped.map((k, i) => (
              <li key={`${k.path}-${i}`} class="alert-entry">
                <span class="badge warn">skipped</span>
                <span class="alert-entry-main">
                  <code>{k.path}</code>: {k.reason}
                </span>
              </li>
            ))}
          </ul>
        </section>
      )}
      {admin && <GitSettings cfg={cfg} onSaved={() => void status.reload()} />}
    </>
  );
}
