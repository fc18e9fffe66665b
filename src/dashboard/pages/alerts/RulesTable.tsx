/**
 * The alert rules as a table: condition, scope, destinations, enabled (a switch for those who may change it), what
 * fires now and the silence; per row Edit, Silence (1 hour, 24 hours, until lifted; or lift it) and Delete with a
 * confirmation.
 */
import { useState } from "preact/hooks";
import { api } from "../../api";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/Field";
import { formatTime } from "../../format";
import { useAction } from "../../hooks";
import { toast } from "../../toast";
import type { AlertRule, WebhookDestination } from "../../types";
import { conditionWords, FOREVER, isSilenced, SILENCE_CHOICES } from "./rules";

export interface RulesTableProps {
  rules: AlertRule[];
  webhooks: WebhookDestination[];
  /** Whether the user may change this rule (role and app scope). */
  mayEdit(r: AlertRule): boolean;
  onEdit(r: AlertRule): void;
  onChanged(): Promise<void> | void;
}

function silenceWords(r: AlertRule): string | null {
  if (!isSilenced(r)) return null;
  return r.silenced_until === FOREVER ? "silenced until lifted" : `silenced until ${formatTime(r.silenced_until)}`;
}

function SilenceDialog({ rule, onClose, onChanged }: { rule: AlertRule; onClose(): void; onChanged(): unknown }) {
  const act = useAction(async (until: string | null) => {
    await api.alerts.silence(rule.id, until);
    toast(until ? `Alert rule "${rule.name}" silenced` : `Silence of "${rule.name}" lifted`);
    await onChanged();
    onClose();
  });
  return (
    <Dialog open title={`Silence "${rule.name}"`} onClose={onClose}>
      <p class="dialog-text">
        A silenced rule still changes state and records its history; it sends no notification until the silence ends.
      </p>
      {silenceWords(rule) && <p class="muted">Now {silenceWords(rule)}.</p>}
      <div class="actions silence-choices">
        <button type="button" class="btn" onClick={onClose}>
          Cancel
        </button>
        {isSilenced(rule) && (
          <button type="button" class="btn" disabled={act.busy} onClick={() => act.run(null)}>
            Lift silence
          </button>
        )}
        {SILENCE_CHOICES.map((c) => (
          <button key={c.id} type="button" class="btn primary" disabled={act.busy} onClick={() => act.run(c.until(Date.now()))}>
            {c.label}
          </button>
        ))}
      </div>
      <ErrorText error={act.error} />
    </Dialog>
  );
}

function EnabledSwitch({ rule, editable, onChanged }: { rule: AlertRule; editable: boolean; onChanged(): unknown }) {
  const act = useAction(async (enabled: boolean) => {
    await api.alerts.update(rule.id, { enabled });
    await onChanged();
  });
  if (!editable) return <span>{rule.enabled ? "yes" : "no"}</span>;
  return (
    <>
      <label class="check">
        <input
          type="checkbox"
          checked={rule.enabled}
          disabled={act.busy}
          onChange={(e) => act.run(e.currentTarget.checked)}
          aria-label={`Enabled: ${rule.name}`}
        />
        <span aria-hidden="true">{rule.enabled ? "on" : "off"}</span>
      </label>
      {act.error && <span class="error-inline"> {act.error}</span>}
    </>
  );
}

function RuleRow({
  r,
  webhooks,
  editable,
  onEdit,
  onSilence,
  onDelete,
  onChanged,
}: {
  r: AlertRule;
  webhooks: WebhookDestination[];
  editable: boolean;
  onEdit(): void;
  onSilence(): void;
  onDelete(): void;
  onChanged(): unknown;
}) {
  const names = r.webhook_ids.map((id) => webhooks.find((w) => w.id === id)?.name ?? `#${id}`);
  const silenced = silenceWords(r);
  return (
    <tr aria-label={r.name}>
      <th scope="row">
        {r.name}
        {silenced && (
          <div>
            <span class="badge warn silenced">{silenced}</span>
          </div>
        )}
      </th>
      <td data-label="App">{r.app_slug ?? <span class="muted">{r.kind === "disk" ? "host" : "all apps"}</span>}</td>
      <td data-label="Condition">{conditionWords(r)}</td>
      <td data-label="Webhooks">{names.length ? names.join(", ") : <span class="muted">none</span>}</td>
      <td data-label="Enabled">
        <EnabledSwitch rule={r} editable={editable} onChanged={onChanged} />
      </td>
      <td data-label="Firing now">
        {r.firing.length ? (
          <span class="badge bad" title={r.firing.map((f) => f.subject).join(", ")}>
            firing{r.firing.length > 1 ? ` ×${r.firing.length}` : ""}
          </span>
        ) : (
          <span class="badge ok">ok</span>
        )}
      </td>
      <td class="cell-actions">
        {editable && (
          <>
            <button type="button" class="btn small" onClick={onEdit}>
              Edit<span class="sr-only"> {r.name}</span>
            </button>
            <button type="button" class="btn small" onClick={onSilence}>
              Silence…<span class="sr-only"> {r.name}</span>
            </button>
            <button type="button" class="btn small danger-outline" onClick={onDelete}>
              Delete<span class="sr-only"> {r.name}</span>
            </button>
          </>
        )}
      </td>
    </tr>
  );
}

/** The table with its silence and delete dialogs. */
export function RulesTable({ rules, webhooks, mayEdit, onEdit, onChanged }: RulesTableProps) {
  const [silencing, setSilencing] = useState<AlertRule | null>(null);
  const [deleting, setDeleting] = useState<AlertRule | null>(null);
  return (
    <>
      <div class="table-wrap">
        <table class="table stack rules-table">
          <caption class="sr-only">Alert rules</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">App</th>
              <th scope="col">Condition</th>
              <th scope="col">Webhooks</th>
              <th scope="col">Enabled</th>
              <th scope="col">Now</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rules.map((r) => (
              <RuleRow
                key={r.id}
                r={r}
                webhooks={webhooks}
                editable={mayEdit(r)}
                onEdit={() => onEdit(r)}
                onSilence={() => setSilencing(r)}
                onDelete={() => setDeleting(r)}
                onChanged={onChanged}
              />
            ))}
          </tbody>
        </table>
      </div>
      {silencing && (
        <SilenceDialog
          rule={rules.find((r) => r.id === silencing.id) ?? silencing}
          onClose={() => setSilencing(null)}
          onChanged={onChanged}
        />
      )}
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete "${deleting?.name ?? ""}"?`}
        confirmLabel="Delete rule"
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          if (!deleting) return;
          await api.alerts.remove(deleting.id);
          toast(`Alert rule "${deleting.name}" deleted`);
          await onChanged();
        }}
      >
        <p>
          It stops being evaluated and sends nothing more{deleting?.firing.length ? ", not even a resolved notice" : ""}. Its
          history stays.
        </p>
      </ConfirmDialog>
    </>
  );
}
