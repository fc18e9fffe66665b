/**
 * Create or edit an alert rule in a dialog: name, app (or every app), kind, the threshold and duration the kind
 * uses, repeat interval, destinations and enabled. The server validates; its 400 line is shown as it says it.
 */
import { useState } from "preact/hooks";
import { api } from "../../api";
import { Dialog } from "../../components/Dialog";
import { ErrorText, SelectField, TextField } from "../../components/Field";
import { useAction } from "../../hooks";
import { toast } from "../../toast";
import { ALERT_KINDS, type AlertRule, type WebhookDestination } from "../../types";
import { bodyOf, draftOf, KIND_INFO, type RuleDraft } from "./rules";

export interface RuleDialogProps {
  /** The rule edited; null for a new one. */
  rule: AlertRule | null;
  /** Apps the user may choose; `allowGlobal` adds "All apps". */
  apps: string[];
  allowGlobal: boolean;
  webhooks: WebhookDestination[];
  onSaved(): void;
  onClose(): void;
}

const KIND_OPTIONS = ALERT_KINDS.map((k) => ({ value: k, label: KIND_INFO[k].name }));

/** The dialog (rendered open; unmount it to close). */
export function RuleDialog({ rule, apps, allowGlobal, webhooks, onSaved, onClose }: RuleDialogProps) {
  const [d, setD] = useState<RuleDraft>(() => {
    const draft = draftOf(rule ?? undefined);
    if (!rule && !allowGlobal && apps.length) draft.app = apps[0];
    return draft;
  });
  const [localError, setLocalError] = useState<string | null>(null);
  const set = (patch: Partial<RuleDraft>) => setD((cur) => ({ ...cur, ...patch }));
  const info = KIND_INFO[d.kind];
  const save = useAction(async () => {
    const out = bodyOf(d);
    if ("error" in out) throw new Error(out.error);
    const saved = rule ? await api.alerts.update(rule.id, out.body) : await api.alerts.create(out.body);
    toast(`Alert rule "${saved.name}" ${rule ? "saved" : "created"}`);
    onSaved();
  });
  const appOptions = [
    ...(allowGlobal || d.app === "" ? [{ value: "", label: info.host ? "The host" : "All apps" }] : []),
    ...apps.map((a) => ({ value: a, label: a })),
  ];
  if (d.app !== "" && !apps.includes(d.app)) appOptions.push({ value: d.app, label: d.app });

  const submit = async (e: Event) => {
    e.preventDefault();
    setLocalError(null);
    if (!d.name.trim()) return setLocalError("name must not be blank");
    await save.run();
  };

  return (
    <Dialog open title={rule ? `Edit "${rule.name}"` : "New alert rule"} onClose={onClose}>
      <form class="rule-form" aria-label={rule ? "Edit alert rule" : "New alert rule"} onSubmit={submit} noValidate>
        <TextField label="Name" required maxLength={100} value={d.name} onValue={(v) => set({ name: v })} />
        <SelectField label="Kind" value={d.kind} onValue={(v) => set({ kind: v as RuleDraft["kind"] })} options={KIND_OPTIONS} />
        <SelectField
          label="App"
          value={info.host ? "" : d.app}
          onValue={(v) => set({ app: v })}
          options={info.host ? [{ value: "", label: "The host" }] : appOptions}
          disabled={info.host}
        />
        {info.threshold !== null && (
          <TextField
            label={info.threshold}
            type="number"
            inputMode="numeric"
            min={0}
            step={0.1}
            required
            value={d.threshold}
            onValue={(v) => set({ threshold: v })}
          />
        )}
        {info.duration && (
          <TextField
            label="For"
            value={d.duration}
            onValue={(v) => set({ duration: v })}
            placeholder="5m"
            hint={
              d.kind === "app_down"
                ? "How long no container runs (or no sample arrives) before it fires, e.g. 5m."
                : "How long the condition must hold before it fires, e.g. 5m; 0s fires at once."
            }
          />
        )}
        {!info.duration && <p class="hint">Fires as soon as it happens.</p>}
        <TextField
          label="Repeat every"
          value={d.repeat}
          onValue={(v) => set({ repeat: v })}
          placeholder="1h"
          hint="Notify again while it keeps firing; empty: once when it fires and once when it resolves."
        />
        <fieldset class="webhook-picks">
          <legend>Notify</legend>
          {webhooks.length === 0 ? (
            <p class="hint">No webhook destinations yet: the rule still records its history here.</p>
          ) : (
            <div class="check-chips">
              {webhooks.map((w) => (
                <label key={w.id} class="check-chip">
                  <input
                    type="checkbox"
                    checked={d.webhookIds.includes(w.id)}
                    onChange={(e) =>
                      set({
                        webhookIds: e.currentTarget.checked ? [...d.webhookIds, w.id] : d.webhookIds.filter((x) => x !== w.id),
                      })
                    }
                  />
                  <span>
                    {w.name} ({w.kind})
                  </span>
                </label>
              ))}
            </div>
          )}
        </fieldset>
        <label class="check">
          <input type="checkbox" checked={d.enabled} onChange={(e) => set({ enabled: e.currentTarget.checked })} />
          Enabled
        </label>
        <ErrorText error={localError ?? save.error} />
        <div class="actions">
          <button type="button" class="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="btn primary" disabled={save.busy}>
            {rule ? "Save rule" : "Create rule"}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
