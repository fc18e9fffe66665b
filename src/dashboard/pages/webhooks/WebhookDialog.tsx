/**
 * Create or edit a webhook destination: name, kind, URL, secret (write-only: a stored one shows as "set", a blank
 * field keeps it, a checkbox removes it) and enabled; a Test button sends a test event to what is typed. The server
 * validates (a private address is refused unless the setting allows it); its line is shown as it says it.
 */
import { useState } from "preact/hooks";
import { api } from "../../api";
import { Dialog } from "../../components/Dialog";
import { ErrorText, SelectField, TextField } from "../../components/Field";
import { useAction } from "../../hooks";
import { toast } from "../../toast";
import {
  SECRET_MASK,
  WEBHOOK_KINDS,
  type WebhookDestination,
  type WebhookInput,
  type WebhookKind,
  type WebhookTestResult,
} from "../../types";
import { TestResult } from "./TestResult";

export interface WebhookDialogProps {
  /** The destination edited; null for a new one. */
  hook: WebhookDestination | null;
  onSaved(): void;
  onClose(): void;
}

const KIND_OPTIONS = WEBHOOK_KINDS.map((k) => ({
  value: k,
  label: k === "generic" ? "Generic (JSON, signed with the secret)" : k === "slack" ? "Slack" : "Discord",
}));

/** The dialog (rendered open; unmount it to close). */
export function WebhookDialog({ hook, onSaved, onClose }: WebhookDialogProps) {
  const [name, setName] = useState(hook?.name ?? "");
  const [kind, setKind] = useState<WebhookKind>(hook?.kind ?? "generic");
  const [url, setUrl] = useState(hook?.url ?? "");
  const [secret, setSecret] = useState("");
  const [clearSecret, setClearSecret] = useState(false);
  const [enabled, setEnabled] = useState(hook?.enabled ?? true);
  const [tested, setTested] = useState<WebhookTestResult | null>(null);
  const hasSecret = hook !== null && hook.secret !== "";

  const body = (): WebhookInput => {
    const b: WebhookInput = { name: name.trim(), kind, url: url.trim(), enabled };
    // omitted (or the mask) keeps the stored secret; "" removes it
    if (secret !== "") b.secret = secret;
    else if (clearSecret) b.secret = "";
    else if (hasSecret) b.secret = SECRET_MASK;
    return b;
  };
  const save = useAction(async () => {
    const saved = hook ? await api.webhooks.update(hook.id, body()) : await api.webhooks.create(body());
    toast(`Webhook "${saved.name}" ${hook ? "saved" : "created"}`);
    onSaved();
  });
  const test = useAction(async () => {
    setTested(null);
    // an edited destination is tested by id: what is typed wins, a blank secret means the stored one
    const typed = clearSecret ? { secret: "" } : secret ? { secret } : {};
    setTested(await api.webhooks.test({ ...(hook ? { id: hook.id } : {}), url: url.trim(), kind, ...typed }));
  });

  return (
    <Dialog open title={hook ? `Edit "${hook.name}"` : "New webhook destination"} onClose={onClose}>
      <form
        class="rule-form"
        aria-label={hook ? "Edit webhook" : "New webhook"}
        onSubmit={(e) => {
          e.preventDefault();
          void save.run();
        }}
      >
        <TextField label="Name" required maxLength={100} value={name} onValue={setName} />
        <SelectField label="Kind" value={kind} onValue={(v) => setKind(v as WebhookKind)} options={KIND_OPTIONS} />
        <TextField
          label="URL"
          required
          placeholder="https://hooks.example.com/sundeck"
          value={url}
          onValue={setUrl}
          hint="Public addresses only: private, loopback and link-local ones are refused unless the server allows them."
        />
        <TextField
          label="Secret"
          type="password"
          autoComplete="new-password"
          value={secret}
          onValue={(v) => {
            setSecret(v);
            if (v) setClearSecret(false);
          }}
          placeholder={hasSecret ? "set: leave blank to keep it" : "not set"}
          hint={
            kind === "generic"
              ? "Signs each notification (X-Sundeck-Signature-256). It cannot be read back once saved."
              : "Only the generic kind is signed; Slack and Discord URLs carry their own token."
          }
        />
        {hasSecret && (
          <label class="check">
            <input
              type="checkbox"
              checked={clearSecret}
              disabled={secret !== ""}
              onChange={(e) => setClearSecret(e.currentTarget.checked)}
            />
            Remove the stored secret
          </label>
        )}
        <label class="check">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
          Enabled
        </label>
        <ErrorText error={save.error ?? test.error} />
        {tested && <TestResult result={tested} />}
        <div class="actions">
          <button type="button" class="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="button" class="btn" disabled={test.busy || !url.trim()} onClick={() => test.run()}>
            {test.busy ? "Testing…" : "Send test"}
          </button>
          <button type="submit" class="btn primary" disabled={save.busy}>
            {hook ? "Save webhook" : "Create webhook"}
          </button>
        </div>
        {hasSecret && !secret && !clearSecret && <p class="hint">A test is signed with the stored secret.</p>}
      </form>
    </Dialog>
  );
}
