/**
 * Alerts: what fires now, the rules (create, edit, enable, silence, delete), the spec's five example rules one click
 * each, and the history. Rules, their state and the history's first page are refreshed every 10 s while the page is
 * visible. Viewers only read; a manager changes the rules of the apps granted to them; global rules are the admins'.
 */
import { useEffect, useState } from "preact/hooks";
import { api } from "../../api";
import { ErrorText, SelectField } from "../../components/Field";
import { formatTime, relativeTime } from "../../format";
import { useAction, usePolled, useResource } from "../../hooks";
import { Link } from "../../router";
import { mayMutateApps, useSession } from "../../session";
import { toast } from "../../toast";
import type { AlertRule, Me } from "../../types";
import { History } from "./History";
import { RuleDialog } from "./RuleDialog";
import { RulesTable } from "./RulesTable";
import { EXAMPLE_RULES, exampleBody } from "./rules";

/** Refresh of the rules and their firing state while visible. */
export const ALERTS_POLL_MS = 10_000;

const isAdmin = (me: Me) => me.role === "super_admin" || me.role === "admin";

/** Whether `me` may change rule `r`: not a viewer, and an admin or a manager of the rule's app. */
export function mayEditRule(me: Me, r: Pick<AlertRule, "app_slug">): boolean {
  if (!mayMutateApps(me)) return false;
  return isAdmin(me) || (r.app_slug !== null && me.app_access.includes(r.app_slug));
}

function Examples({
  apps,
  allowGlobal,
  webhookIds,
  onAdded,
}: {
  apps: string[];
  allowGlobal: boolean;
  webhookIds: number[];
  onAdded(): unknown;
}) {
  const [target, setTarget] = useState(allowGlobal ? "" : (apps[0] ?? ""));
  const add = useAction(async (i: number) => {
    const created = await api.alerts.create(exampleBody(EXAMPLE_RULES[i], target || null, webhookIds));
    toast(`Alert rule "${created.name}" created`);
    await onAdded();
  });
  const options = [...(allowGlobal ? [{ value: "", label: "All apps" }] : []), ...apps.map((a) => ({ value: a, label: a }))];
  return (
    <section class="card" aria-labelledby="examples-title">
      <h2 id="examples-title">Add an example rule</h2>
      <div class="filter-row">
        <SelectField label="For" class="compact" value={target} onValue={setTarget} options={options} />
      </div>
      <div class="example-buttons">
        {EXAMPLE_RULES.map((e, i) => (
          <button key={e.id} type="button" class="btn small" disabled={add.busy} onClick={() => add.run(i)}>
            {e.button}
          </button>
        ))}
      </div>
      <ErrorText error={add.error} />
      <p class="hint">
        One click creates the rule, enabled{webhookIds.length ? ", notifying every webhook destination" : ""}; edit it to change
        it. The disk rule watches the host whatever app is chosen.
      </p>
    </section>
  );
}

function FiringNow({ rules }: { rules: AlertRule[] }) {
  const firing = rules.flatMap((r) => r.firing.map((f) => ({ rule: r, ...f })));
  return (
    <section class="card" aria-labelledby="firing-title">
      <h2 id="firing-title">Firing now</h2>
      {firing.length === 0 ? (
        <p class="muted">Nothing is firing.</p>
      ) : (
        <ul class="alert-entries" aria-label="Firing now">
          {firing.map((f) => (
            <li key={`${f.rule.id}:${f.subject}`} class="alert-entry">
              <span class="badge bad">firing</span>
              <span class="alert-entry-main">
                <strong>{f.rule.name}</strong> <span class="muted small">{f.subject}</span>
                {f.value !== null && <span class="small"> · value {Math.round(f.value * 100) / 100}</span>}
              </span>
              <time class="muted small" dateTime={f.since} title={formatTime(f.since)}>
                since {relativeTime(f.since)}
              </time>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** The page at /alerts. */
export function AlertsPage() {
  const { me } = useSession();
  const rules = usePolled(() => api.alerts.rules(), ALERTS_POLL_MS);
  // a role that may not list destinations still sees and edits its rules, just without names for the webhooks
  const webhooks = useResource(() => api.webhooks.list().catch(() => []));
  const apps = useResource(() => api.apps.list().then((l) => l.map((a) => a.slug).sort()));
  const [editing, setEditing] = useState<AlertRule | "new" | null>(null);
  const [refresh, setRefresh] = useState(0);
  const canWrite = mayMutateApps(me);
  const allowGlobal = isAdmin(me);
  const writableApps = (apps.data ?? []).filter((a) => isAdmin(me) || me.app_access.includes(a));
  const reload = () => rules.reload();
  // the history's first page follows every load of the rules (the 10 s poll and each change made here)
  useEffect(() => {
    if (rules.data) setRefresh((n) => n + 1);
  }, [rules.data]);
  const list = rules.data ?? [];

  return (
    <>
      <div class="page-head page-head-row">
        <div>
          <h1>Alerts</h1>
          <p class="muted">
            Rules checked against the metrics every 10 s; notifications go to the{" "}
            <Link href="/webhooks">webhook destinations</Link>.
          </p>
        </div>
        {canWrite && (allowGlobal || writableApps.length > 0) && (
          <button type="button" class="btn primary" onClick={() => setEditing("new")}>
            New rule
          </button>
        )}
      </div>
      <FiringNow rules={list} />
      <section class="card" aria-labelledby="rules-title">
        <h2 id="rules-title">Rules</h2>
        <ErrorText error={rules.error} />
        {!rules.data && rules.loading && <p class="muted">Loading…</p>}
        {rules.data?.length === 0 && <p class="muted">No alert rules yet.</p>}
        {list.length > 0 && (
          <RulesTable
            rules={list}
            webhooks={webhooks.data ?? []}
            mayEdit={(r) => mayEditRule(me, r)}
            onEdit={setEditing}
            onChanged={reload}
          />
        )}
      </section>
      {canWrite && (allowGlobal || writableApps.length > 0) && (
        <Examples
          apps={writableApps}
          allowGlobal={allowGlobal}
          webhookIds={(webhooks.data ?? []).filter((w) => w.enabled).map((w) => w.id)}
          onAdded={reload}
        />
      )}
      <History apps={apps.data ?? []} refresh={refresh} />
      {editing !== null && (
        <RuleDialog
          rule={editing === "new" ? null : editing}
          apps={writableApps}
          allowGlobal={allowGlobal}
          webhooks={webhooks.data ?? []}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            void reload();
          }}
        />
      )}
    </>
  );
}
