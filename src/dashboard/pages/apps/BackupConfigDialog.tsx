/**
 * Create or edit a backup config: strategy and service (the detected ones offered first), target (local disk, or an
 * S3-compatible bucket whose secret key is write-only: a stored one shows as "set" and a blank field keeps it),
 * schedule (cron, said in words under the field) and time zone, retention by count and by age, pre and post hooks
 * (one `sh -c` command per line, run in the service's container), enabled. The server validates; its line is shown.
 */
import { useState } from "preact/hooks";
import { api } from "../../api";
import { type ConfigForm, configForm, configInput, cronHint } from "../../backups";
import { Dialog } from "../../components/Dialog";
import { ErrorText, SelectField, TextAreaField, TextField } from "../../components/Field";
import { useAction } from "../../hooks";
import { toast } from "../../toast";
import { BACKUP_STRATEGIES, type BackupConfig, type BackupStrategy, type DetectedStrategy } from "../../types";

export interface BackupConfigDialogProps {
  slug: string;
  /** The config edited; null for a new one. */
  config: BackupConfig | null;
  detected: DetectedStrategy[];
  /** The app's service names, for the service choice. */
  services: string[];
  onSaved(): void;
  onClose(): void;
}

const STRATEGY_LABELS: Record<BackupStrategy, string> = {
  postgres: "PostgreSQL (pg_dump)",
  mysql: "MySQL / MariaDB (dump)",
  redis: "Redis (RDB snapshot)",
  sqlite: "SQLite (online backup)",
  volume: "Volumes (tar of the service's volumes)",
};

/** The dialog (rendered open; unmount it to close). */
export function BackupConfigDialog({ slug, config, detected, services, onSaved, onClose }: BackupConfigDialogProps) {
  const [f, setF] = useState<ConfigForm>(() => configForm(config, detected[0]));
  const set =
    <K extends keyof ConfigForm>(k: K) =>
    (v: ConfigForm[K]) =>
      setF((cur) => ({ ...cur, [k]: v }));
  const hasSecret = config?.target.kind === "s3" && config.target.secret_key !== "";
  const save = useAction(async () => {
    const body = configInput(f, config);
    const saved = config ? await api.backups.update(config.id, body) : await api.backups.create(slug, body);
    toast(`Backup of ${saved.service} (${saved.strategy}) ${config ? "saved" : "created"}`);
    onSaved();
  });
  const serviceNames = [...new Set([...services, ...detected.map((d) => d.service), ...(f.service ? [f.service] : [])])];
  const hint = detected.find((d) => d.service === f.service && d.strategy === f.strategy);

  return (
    <Dialog open title={config ? `Edit backup #${config.id}` : "New backup"} onClose={onClose}>
      <form
        class="rule-form"
        aria-label={config ? "Edit backup" : "New backup"}
        onSubmit={(e) => {
          e.preventDefault();
          void save.run();
        }}
      >
        <SelectField
          label="Service"
          value={f.service}
          onValue={(v) => {
            const d = detected.find((x) => x.service === v);
            setF((cur) => ({ ...cur, service: v, strategy: d?.strategy ?? cur.strategy }));
          }}
          options={[
            ...(f.service ? [] : [{ value: "", label: "Pick a service" }]),
            ...serviceNames.map((s) => ({ value: s, label: s })),
          ]}
        />
        <SelectField
          label="Strategy"
          value={f.strategy}
          onValue={(v) => set("strategy")(v as BackupStrategy)}
          options={BACKUP_STRATEGIES.map((s) => ({ value: s, label: STRATEGY_LABELS[s] }))}
        />
        {hint && <p class="hint">Detected: {hint.reason}</p>}
        <SelectField
          label="Target"
          value={f.kind}
          onValue={(v) => set("kind")(v as "local" | "s3")}
          options={[
            { value: "local", label: "Local disk (under the server's data directory)" },
            { value: "s3", label: "S3-compatible bucket" },
          ]}
        />
        {f.kind === "s3" && (
          <fieldset class="fieldset">
            <legend>S3 bucket</legend>
            <TextField
              label="Endpoint"
              required
              placeholder="https://s3.eu-west-1.amazonaws.com"
              value={f.endpoint}
              onValue={set("endpoint")}
            />
            <TextField label="Bucket" required value={f.bucket} onValue={set("bucket")} />
            <TextField label="Prefix" placeholder="sundeck/" value={f.prefix} onValue={set("prefix")} />
            <TextField label="Region" placeholder="us-east-1" value={f.region} onValue={set("region")} />
            <TextField label="Access key" autoComplete="off" value={f.access_key} onValue={set("access_key")} />
            <TextField
              label="Secret key"
              type="password"
              autoComplete="new-password"
              value={f.secret_key}
              onValue={set("secret_key")}
              placeholder={hasSecret ? "set: leave blank to keep it" : "not set"}
              hint="Stored encrypted; it cannot be read back once saved."
            />
            <label class="check">
              <input type="checkbox" checked={f.path_style} onChange={(e) => set("path_style")(e.currentTarget.checked)} />
              Path-style addressing (most self-hosted S3 servers)
            </label>
          </fieldset>
        )}
        <TextField
          label="Schedule (cron)"
          placeholder="0 3 * * *"
          value={f.schedule}
          onValue={set("schedule")}
          hint={cronHint(f.schedule)}
        />
        <TextField
          label="Time zone"
          placeholder="the server's"
          value={f.timezone}
          onValue={set("timezone")}
          hint="An IANA name such as Europe/Paris; blank uses the server's."
        />
        <TextField
          label="Keep the last"
          type="number"
          min={1}
          inputMode="numeric"
          value={f.retention_count}
          onValue={set("retention_count")}
          hint="Backups kept; older ones are deleted with their file. Blank: no limit by count."
        />
        <TextField
          label="Keep for days"
          type="number"
          min={1}
          inputMode="numeric"
          value={f.retention_days}
          onValue={set("retention_days")}
          hint="Blank: no limit by age."
        />
        <TextAreaField
          label="Before the backup"
          class="mono"
          rows={2}
          value={f.pre_hooks}
          onValue={set("pre_hooks")}
          hint="One command per line, run with sh -c in the service's container; a failing one fails the run."
        />
        <TextAreaField label="After the backup" class="mono" rows={2} value={f.post_hooks} onValue={set("post_hooks")} />
        <label class="check">
          <input type="checkbox" checked={f.enabled} onChange={(e) => set("enabled")(e.currentTarget.checked)} />
          Enabled (runs on its schedule)
        </label>
        <ErrorText error={save.error} />
        <div class="actions">
          <button type="button" class="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="btn primary" disabled={save.busy || !f.service}>
            {config ? "Save backup" : "Create backup"}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
