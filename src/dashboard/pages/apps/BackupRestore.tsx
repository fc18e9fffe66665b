/**
 * Restoring an app's data: from a stored run, behind a confirmation that asks for the app's name to be typed (a
 * restore overwrites the service's current data), and from an uploaded archive (file, strategy, optional container).
 * The server checks an archive before extracting anything; its refusal names the entry ("restore archive refused:
 * ...") and is shown as it says it; a fifth restore at once answers 429, shown with its "try again in N s".
 */
import { useId, useState } from "preact/hooks";
import { api } from "../../api";
import { Dialog } from "../../components/Dialog";
import { ErrorText, SelectField, TextField } from "../../components/Field";
import { formatTime } from "../../format";
import { useAction } from "../../hooks";
import { formatSize } from "../../metrics";
import { toast } from "../../toast";
import { BACKUP_STRATEGIES, type BackupRun, type BackupStrategy } from "../../types";

/** The server's body limit of upload-restore. */
const UPLOAD_LIMIT = 32 * 2 ** 20;

/** Strategies whose service the server stops around a restore (files that a running process holds open). */
const STOPPED = new Set(["volume", "sqlite", "redis"]);

/** Confirm a restore from `run` by typing the app's slug. */
export function RestoreDialog({
  slug,
  run,
  onClose,
  onStarted,
}: {
  slug: string;
  run: BackupRun;
  onClose(): void;
  onStarted(): void;
}) {
  const [typed, setTyped] = useState("");
  const restore = useAction(async () => {
    const r = await api.backups.restore(run.id);
    toast(`Restore #${r.restore_id} of backup #${run.id} started`);
    onStarted();
  });
  return (
    <Dialog open title={`Restore backup #${run.id}?`} onClose={onClose}>
      <form
        aria-label="Confirm restore"
        onSubmit={(e) => {
          e.preventDefault();
          if (typed === slug) void restore.run();
        }}
      >
        <div class="dialog-text">
          <p>
            The {run.strategy} data of <strong>{run.service ?? "the service"}</strong> is replaced by this backup from{" "}
            {formatTime(run.started_at)}
            {run.size_bytes != null ? ` (${formatSize(run.size_bytes)})` : ""}. What was written since is lost.
            {STOPPED.has(run.strategy) ? " The service is stopped during the restore and started again after it." : ""}
          </p>
        </div>
        <TextField label={`Type ${slug} to confirm`} autoComplete="off" value={typed} onValue={setTyped} />
        <ErrorText error={restore.error} />
        <div class="actions">
          <button type="button" class="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="btn danger" disabled={typed !== slug || restore.busy}>
            {restore.busy ? "Starting…" : "Restore"}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** Restore from an archive on this computer (up to 32 MiB). */
export function UploadRestore({
  slug,
  services,
  onStarted,
}: {
  slug: string;
  /** Container names of the app, offered as targets. */
  services: Array<{ service: string; containers: string[] }>;
  onStarted(): void;
}) {
  const fileId = useId();
  const [file, setFile] = useState<File | null>(null);
  const [strategy, setStrategy] = useState<BackupStrategy>("volume");
  const [container, setContainer] = useState("");
  const [typed, setTyped] = useState("");
  const [formKey, setFormKey] = useState(0);
  const send = useAction(async () => {
    if (!file) return;
    // the server's limit; saying it here spares an upload that would be cut off
    if (file.size > UPLOAD_LIMIT) throw new Error(`${file.name} is ${formatSize(file.size)}: uploads are limited to 32 MiB`);
    const form = new FormData();
    form.append("file", file, file.name);
    form.append("strategy", strategy);
    if (container) form.append("container", container);
    const r = await api.backups.uploadRestore(slug, form);
    toast(`Restore #${r.restore_id} from ${file.name} started`);
    setFile(null);
    setTyped("");
    setFormKey((k) => k + 1);
    onStarted();
  });
  const containers = services.flatMap((s) => s.containers.map((c) => ({ value: c, label: `${c} (${s.service})` })));
  return (
    <section class="card" aria-labelledby="upload-restore-title">
      <h2 id="upload-restore-title">Restore from a file</h2>
      <p class="muted small">
        A backup archive from this computer, up to 32 MiB. It is checked before anything is written: absolute paths, .. segments,
        links and device entries are refused.
      </p>
      <form
        key={formKey}
        class="rule-form"
        aria-label="Restore from a file"
        onSubmit={(e) => {
          e.preventDefault();
          void send.run();
        }}
      >
        <div class="field">
          <label for={fileId}>Archive</label>
          <input
            id={fileId}
            type="file"
            accept=".gz,.tgz,.tar,.dump,.sql,.rdb,.db,.sqlite,application/gzip,application/x-tar"
            onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
          />
        </div>
        <SelectField
          label="Strategy"
          value={strategy}
          onValue={(v) => setStrategy(v as BackupStrategy)}
          options={BACKUP_STRATEGIES.map((s) => ({ value: s, label: s }))}
        />
        <SelectField
          label="Container"
          value={container}
          onValue={setContainer}
          options={[{ value: "", label: "The strategy's service (default)" }, ...containers]}
        />
        <TextField label={`Type ${slug} to confirm`} autoComplete="off" value={typed} onValue={setTyped} />
        <ErrorText error={send.error} />
        <div class="actions">
          <button type="submit" class="btn danger" disabled={!file || typed !== slug || send.busy}>
            {send.busy ? "Uploading…" : "Upload and restore"}
          </button>
        </div>
      </form>
    </section>
  );
}
