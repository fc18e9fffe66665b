/**
 * Webhook destinations of the alert notifications: the list (name, kind, URL, enabled, whether a secret is set),
 * create and edit in a dialog, delete with a confirmation, a Test button per destination showing ok, status and
 * error, and the delivery log of the one selected. Changing, testing them and their log are for admins; others see the
 * list (the server cuts their URLs to the origin, since Slack and Discord URLs carry a token).
 */
import { useState } from "preact/hooks";
import { api } from "../../api";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { ErrorText } from "../../components/Field";
import { useAction, useResource } from "../../hooks";
import { useSession } from "../../session";
import { toast } from "../../toast";
import type { Me, WebhookDestination, WebhookTestResult } from "../../types";
import { Deliveries } from "./Deliveries";
import { TestResult } from "./TestResult";
import { WebhookDialog } from "./WebhookDialog";

/** Destinations are server-wide settings: super-admins and admins change them. */
export const mayManageWebhooks = (me: Me) => me.role === "super_admin" || me.role === "admin";

function Row({
  w,
  canEdit,
  selected,
  onEdit,
  onDelete,
  onShow,
  onTested,
}: {
  w: WebhookDestination;
  canEdit: boolean;
  selected: boolean;
  onEdit(): void;
  onDelete(): void;
  onShow(): void;
  onTested(): void;
}) {
  const [result, setResult] = useState<WebhookTestResult | null>(null);
  const test = useAction(async () => {
    setResult(null);
    // by id: the server uses the stored url, kind and secret (which the page cannot read) and logs a test delivery
    setResult(await api.webhooks.test({ id: w.id }));
    onTested();
  });
  return (
    <tr aria-label={w.name} class={selected ? "current-row" : undefined}>
      <th scope="row">{w.name}</th>
      <td data-label="Kind">{w.kind}</td>
      <td data-label="URL" class="url-cell">
        <code>{w.url}</code>
      </td>
      <td data-label="Enabled">{w.enabled ? "yes" : <span class="muted">no</span>}</td>
      <td data-label="Secret">{w.secret ? "set" : <span class="muted">not set</span>}</td>
      <td class="cell-actions">
        <div class="row-buttons">
          {canEdit && (
            <button type="button" class="btn small" disabled={test.busy} onClick={() => test.run()}>
              {test.busy ? "Testing…" : "Test"}
              <span class="sr-only"> {w.name}</span>
            </button>
          )}
          {canEdit && (
            <>
              <button type="button" class="btn small" aria-pressed={selected} onClick={onShow}>
                Deliveries<span class="sr-only"> of {w.name}</span>
              </button>
              <button type="button" class="btn small" onClick={onEdit}>
                Edit<span class="sr-only"> {w.name}</span>
              </button>
              <button type="button" class="btn small danger-outline" onClick={onDelete}>
                Delete<span class="sr-only"> {w.name}</span>
              </button>
            </>
          )}
        </div>
        <ErrorText error={test.error} />
        {result && <TestResult result={result} />}
      </td>
    </tr>
  );
}

/** The page at /webhooks. */
export function WebhooksPage() {
  const { me } = useSession();
  const canEdit = mayManageWebhooks(me);
  const hooks = useResource(() => api.webhooks.list());
  const [editing, setEditing] = useState<WebhookDestination | "new" | null>(null);
  const [deleting, setDeleting] = useState<WebhookDestination | null>(null);
  const [shown, setShown] = useState<number | null>(null);
  // a test by id lands in the delivery log: the shown log reloads after one
  const [tests, setTests] = useState(0);
  const list = hooks.data ?? [];
  const selected = list.find((w) => w.id === shown) ?? null;

  return (
    <>
      <div class="page-head page-head-row">
        <div>
          <h1>Webhooks</h1>
          <p class="muted">Where alert notifications go: a generic JSON receiver, Slack or Discord.</p>
        </div>
        {canEdit && (
          <button type="button" class="btn primary" onClick={() => setEditing("new")}>
            New webhook
          </button>
        )}
      </div>
      <section class="card" aria-labelledby="webhooks-title">
        <h2 id="webhooks-title">Destinations</h2>
        <ErrorText error={hooks.error} />
        {!hooks.data && hooks.loading && <p class="muted">Loading…</p>}
        {hooks.data?.length === 0 && (
          <p class="muted">No destinations yet{canEdit ? ": add one, then pick it in an alert rule." : "."}</p>
        )}
        {list.length > 0 && (
          <div class="table-wrap">
            <table class="table stack">
              <caption class="sr-only">Webhook destinations</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Kind</th>
                  <th scope="col">URL</th>
                  <th scope="col">Enabled</th>
                  <th scope="col">Secret</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.map((w) => (
                  <Row
                    key={w.id}
                    w={w}
                    canEdit={canEdit}
                    selected={w.id === shown}
                    onEdit={() => setEditing(w)}
                    onDelete={() => setDeleting(w)}
                    onShow={() => setShown(w.id === shown ? null : w.id)}
                    onTested={() => setTests((n) => n + 1)}
                  />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {selected && <Deliveries key={selected.id} hook={selected} refresh={tests} />}
      {editing !== null && (
        <WebhookDialog
          hook={editing === "new" ? null : editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            void hooks.reload();
          }}
        />
      )}
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete "${deleting?.name ?? ""}"?`}
        confirmLabel="Delete webhook"
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          if (!deleting) return;
          await api.webhooks.remove(deleting.id);
          toast(`Webhook "${deleting.name}" deleted`);
          if (shown === deleting.id) setShown(null);
          await hooks.reload();
        }}
      >
        <p>Alert rules that notify it stop sending there. Its delivery log goes with it.</p>
      </ConfirmDialog>
    </>
  );
}
