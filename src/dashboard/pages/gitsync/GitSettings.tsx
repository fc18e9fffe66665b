/**
 * The git sync settings (super-admin): every field of the spec's `git_sync` block, where the values in force come
 * from (`source`: stored at runtime or the server's file), the token and the webhook secret write-only (a stored one
 * shows as "set"; blank keeps it, a checkbox removes it; what was typed is cleared after saving). The server validates
 * and its line is shown as it says it.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ErrorText, SelectField, TextField } from "../../components/Field";
import { configBody, formOf, type GitForm, type GitSyncConfigView, gitApi, secretSet, webhookUrl } from "../../gitsync";
import { type Resource, useAction } from "../../hooks";
import { toast } from "../../toast";

function Check({
  label,
  checked,
  onChange,
  hint,
}: {
  label: string;
  checked: boolean;
  onChange(v: boolean): void;
  hint?: string;
}) {
  return (
    <div class="field">
      <label class="check">
        <input type="checkbox" checked={checked} onChange={(e) => onChange(e.currentTarget.checked)} />
        {label}
      </label>
      {hint && <p class="hint">{hint}</p>}
    </div>
  );
}

function Secret({
  label,
  stored,
  value,
  onValue,
  clear,
  onClear,
  hint,
}: {
  label: string;
  stored: boolean;
  value: string;
  onValue(v: string): void;
  clear: boolean;
  onClear(v: boolean): void;
  hint: ComponentChildren;
}) {
  return (
    <>
      <TextField
        label={label}
        type="password"
        autoComplete="new-password"
        value={value}
        onValue={onValue}
        placeholder={stored ? "set (leave blank to keep)" : "not set"}
        hint={hint}
      />
      {stored && <Check label={`Remove the stored ${label.toLowerCase()}`} checked={clear} onChange={onClear} />}
    </>
  );
}

const AUTH_OPTIONS = [
  { value: "https", label: "HTTPS (username and token)" },
  { value: "ssh", label: "SSH (private key file on the server)" },
];

/** The settings card; `cfg` is the loaded config, reloaded by the page after a save. */
export function GitSettings({ cfg, onSaved }: { cfg: Resource<GitSyncConfigView>; onSaved(): void }) {
  const stored = cfg.data;
  const [f, setF] = useState<GitForm | null>(null);
  useEffect(() => {
    if (stored) setF(formOf(stored));
  }, [stored]);
  const set = (p: Partial<GitForm>) => setF((cur) => (cur ? { ...cur, ...p } : cur));
  const save = useAction(async () => {
    if (!f || !stored) return;
    const r = configBody(f, stored);
    if ("error" in r) throw new Error(r.error);
    cfg.set(await gitApi.saveConfig(r.body));
    toast("Git sync settings saved");
    onSaved();
  });

  return (
    <section class="card" aria-labelledby="git-settings-title">
      <div class="card-head">
        <h2 id="git-settings-title">Settings</h2>
        {stored && (
          <span class="badge" title="Where the values in force come from">
            source: {stored.source}
          </span>
        )}
      </div>
      <ErrorText error={cfg.error} />
      {!stored && cfg.loading && <p class="muted">Loading…</p>}
      {stored && (
        <p class="hint">
          {stored.source === "db"
            ? "Stored at runtime: these values override the server's configuration file."
            : "From the server's configuration file (git_sync). Saving here stores them, and they override the file."}
        </p>
      )}
      {f && stored && (
        <form
          class="rule-form"
          aria-label="Git sync settings"
          onSubmit={(e) => {
            e.preventDefault();
            void save.run();
          }}
        >
          <Check label="Enabled" checked={f.enabled} onChange={(v) => set({ enabled: v })} hint="Starts the sync worker." />
          <TextField
            label="Remote"
            value={f.remote}
            onValue={(v) => set({ remote: v })}
            placeholder="https://git.example.com/ops/apps.git or git@git.example.com:ops/apps.git"
            hint="An empty repository receives the current state as its first commit; one with commits is refused."
          />
          <TextField label="Branch" value={f.branch} onValue={(v) => set({ branch: v })} />
          <TextField label="Author name" value={f.author_name} onValue={(v) => set({ author_name: v })} />
          <TextField label="Author email" value={f.author_email} onValue={(v) => set({ author_email: v })} />
          <SelectField
            label="Authentication"
            value={f.auth}
            onValue={(v) => set({ auth: v as GitForm["auth"] })}
            options={AUTH_OPTIONS}
          />
          {f.auth === "ssh" ? (
            <TextField
              label="SSH key path"
              value={f.ssh_key_path}
              onValue={(v) => set({ ssh_key_path: v })}
              hint="A private key file on the server; empty uses the system default."
            />
          ) : (
            <>
              <TextField label="HTTPS username" value={f.https_username} onValue={(v) => set({ https_username: v })} />
              <Secret
                label="HTTPS token"
                stored={secretSet(stored.https_token)}
                value={f.https_token}
                onValue={(v) => set({ https_token: v })}
                clear={f.clear_token}
                onClear={(v) => set({ clear_token: v })}
                hint="A token or password; stored encrypted, never shown again."
              />
            </>
          )}
          <TextField
            label="Poll interval"
            value={f.poll_interval}
            onValue={(v) => set({ poll_interval: v })}
            hint="A duration such as 60s or 5m."
          />
          <Check label="Poll the remote" checked={f.poll_enabled} onChange={(v) => set({ poll_enabled: v })} />
          <Check
            label="Push local changes"
            checked={f.auto_push_enabled}
            onChange={(v) => set({ auto_push_enabled: v })}
            hint="Off: pull-only, local changes are never pushed."
          />
          <Check
            label="Apply remote changes automatically"
            checked={f.auto_apply_enabled}
            onChange={(v) => set({ auto_apply_enabled: v })}
            hint="Off: fetch-only, remote commits are counted until you apply them."
          />
          <Secret
            label="Webhook secret"
            stored={secretSet(stored.webhook_secret)}
            value={f.webhook_secret}
            onValue={(v) => set({ webhook_secret: v })}
            clear={f.clear_webhook_secret}
            onClear={(v) => set({ clear_webhook_secret: v })}
            hint={
              <>
                The git host signs its push notifications to <code>{webhookUrl(location.origin)}</code> with it
                (X-Hub-Signature-256).
              </>
            }
          />
          <Check label="Accept webhooks" checked={f.webhook_enabled} onChange={(v) => set({ webhook_enabled: v })} />
          <ErrorText error={save.error} />
          <div class="actions">
            <button type="submit" class="btn primary" disabled={save.busy}>
              {save.busy ? "Saving…" : "Save settings"}
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
