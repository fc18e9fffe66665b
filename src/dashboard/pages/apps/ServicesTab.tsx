/** Services of an app: image, replicas with a scale control (disabled with the reason when it cannot scale), ports, containers. */
import { useEffect, useId, useState } from "preact/hooks";
import { api } from "../../api";
import { humanize } from "../../format";
import { Link } from "../../router";
import type { AppService, AppView } from "../../types";
import { tabHref } from "./tabs";
import type { DeployRun } from "./useDeployRun";

const MAX_REPLICAS = 100;

function ScaleControl({ slug, service, run, busy }: { slug: string; service: AppService; run: DeployRun; busy: boolean }) {
  const id = useId();
  const [value, setValue] = useState(String(service.replicas));
  const [dirty, setDirty] = useState(false);
  useEffect(() => {
    if (!dirty) setValue(String(service.replicas));
  }, [service.replicas, dirty]);
  const n = Number(value);
  const valid = value !== "" && Number.isInteger(n) && n >= 0 && n <= MAX_REPLICAS;
  const can = service.scalable.ok;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!valid) return;
    const ok = await run.start(slug, `Scale ${service.name} to ${n}`, () => api.apps.scale(slug, { [service.name]: n }));
    if (ok) setDirty(false);
  };
  return (
    <form class="scale-form" onSubmit={submit} aria-label={`Scale ${service.name}`}>
      <label for={id} class="sr-only">
        Replicas of {service.name}
      </label>
      <input
        id={id}
        type="number"
        min={0}
        max={MAX_REPLICAS}
        step={1}
        inputMode="numeric"
        value={value}
        disabled={!can}
        aria-describedby={can ? undefined : `${id}-why`}
        onInput={(e) => {
          setValue(e.currentTarget.value);
          setDirty(true);
        }}
      />
      <button type="submit" class="btn small" disabled={!can || busy || !valid || n === service.replicas}>
        Scale
      </button>
      {!can && (
        <p class="hint" id={`${id}-why`}>
          Cannot scale: {service.scalable.reason ?? "not scalable"}
        </p>
      )}
    </form>
  );
}

function Containers({ service }: { service: AppService }) {
  if (service.containers.length === 0) return <p class="muted small">No containers.</p>;
  return (
    <div class="table-wrap">
      <table class="table stack">
        <caption class="sr-only">Containers of {service.name}</caption>
        <thead>
          <tr>
            <th scope="col">Container</th>
            <th scope="col">State</th>
            <th scope="col">Status</th>
            <th scope="col">Health</th>
          </tr>
        </thead>
        <tbody>
          {service.containers.map((c) => (
            <tr key={c.id}>
              <th scope="row" class="mono" title={c.id}>
                {c.name}
              </th>
              <td data-label="State">
                <span class={`badge state-${c.state}`}>{humanize(c.state)}</span>
              </td>
              <td data-label="Status">{c.status}</td>
              <td data-label="Health">{c.health ?? <span class="muted">no check</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Service({
  app,
  service: s,
  run,
  canEdit,
  busy,
}: {
  app: AppView;
  service: AppService;
  run: DeployRun;
  canEdit: boolean;
  busy: boolean;
}) {
  return (
    <section class="card service" aria-label={`Service ${s.name}`}>
      <div class="card-head">
        <h2>{s.name}</h2>
        <code class="service-image">{s.image}</code>
      </div>
      <dl class="facts">
        <dt>Replicas</dt>
        <dd>{canEdit ? <ScaleControl slug={app.slug} service={s} run={run} busy={busy} /> : s.replicas}</dd>
        <dt>Ports</dt>
        <dd>
          {s.ports.length === 0 ? (
            <span class="muted">none published</span>
          ) : (
            <ul class="plain-list">
              {s.ports.map((p) => (
                <li key={p}>
                  <code>{p}</code>
                </li>
              ))}
            </ul>
          )}
        </dd>
      </dl>
      <h3>Containers</h3>
      <Containers service={s} />
    </section>
  );
}

/** The tab. */
export function ServicesTab({ app, run, canEdit, busy }: { app: AppView; run: DeployRun; canEdit: boolean; busy: boolean }) {
  return (
    <>
      {app.services.length === 0 && <p class="muted">No services: the app has no deployable compose file yet.</p>}
      {app.services.map((s) => (
        <Service key={s.name} app={app} service={s} run={run} canEdit={canEdit} busy={busy} />
      ))}
      {app.endpoints.length > 0 && (
        <p class="muted small">
          Routed at {[...new Set(app.endpoints.flatMap((e) => e.hosts))].join(", ")}: hosts, TLS and certificates are in{" "}
          <Link href={tabHref(app.slug, "endpoints")}>Endpoints</Link>, requests in{" "}
          <Link href={tabHref(app.slug, "traffic")}>Traffic</Link>.
        </p>
      )}
    </>
  );
}
