/**
 * The Endpoints tab's edit mode: a row per host (service, domain, port, path, TLS), checked in the browser, saved as
 * `PUT /api/apps/{slug}/endpoints`, which writes the labels into the compose file as a new version and deploys it. The
 * run's output shows in the page's deploy panel; a refusal is shown here and the edits stay.
 */
import type { ComponentChildren } from "preact";
import { useId, useRef, useState } from "preact/hooks";
import { api } from "../../api";
import { Icon } from "../../components/icons";
import type { AppView, TlsMode } from "../../types";
import { Refusal } from "./Checks";
import { outcomeText } from "./DeployConsole";
import {
  bodyOf,
  changed,
  type EndpointRow,
  newRow,
  type RowProblems,
  rowProblems,
  serviceNames,
  TLS_CHOICES,
  type TlsChoice,
  withService,
} from "./endpoint-rows";
import type { DeployRun } from "./useDeployRun";

/** The run's label in the deploy panel. */
export const ENDPOINTS_RUN_LABEL = "Deploy (endpoints change)";

const TLS_WORDS: Record<TlsMode, string> = {
  auto: "auto (ACME)",
  custom: "custom (uploaded)",
  local: "local (local CA)",
  off: "off (plain HTTP)",
};

type FieldName = keyof RowProblems;

interface CellProps {
  name: FieldName | "tls";
  label: string;
  error?: string;
  children(id: string, describedBy: string | undefined): ComponentChildren;
}

/** A labelled control of a row, its problem under it (and tied to it for screen readers). */
function Cell({ name, label, error, children }: CellProps) {
  const id = useId();
  const errId = `${id}-error`;
  return (
    <div class={`field compact ep-${name}`}>
      <label for={id}>{label}</label>
      {children(id, error ? errId : undefined)}
      {error && (
        <p class="error-inline small ep-problem" id={errId}>
          {error}
        </p>
      )}
    </div>
  );
}

interface RowProps {
  n: number;
  row: EndpointRow;
  services: string[];
  server: TlsMode | undefined;
  problems: RowProblems;
  onRow(row: EndpointRow): void;
  onService(service: string): void;
  onBlur(field: FieldName): void;
  onRemove(): void;
}

const TEXT_INPUT = { autoComplete: "off", spellcheck: false, autoCapitalize: "off" } as const;

function EditRow({ n, row, services, server, problems, onRow, onService, onBlur, onRemove }: RowProps) {
  const set = (patch: Partial<EndpointRow>) => onRow({ ...row, ...patch });
  const invalid = (f: FieldName) => (problems[f] ? true : undefined);
  return (
    <li>
      <fieldset class="ep-row">
        <legend class="sr-only">Endpoint {n}</legend>
        <Cell name="service" label="Service" error={problems.service}>
          {(id, d) => (
            <select
              id={id}
              value={row.service}
              aria-invalid={invalid("service")}
              aria-describedby={d}
              onChange={(e) => onService(e.currentTarget.value)}
            >
              {!services.includes(row.service) && <option value={row.service}>{row.service || "choose…"}</option>}
              {services.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          )}
        </Cell>
        <Cell name="domain" label="Domain" error={problems.domain}>
          {(id, d) => (
            <input
              id={id}
              class="mono"
              value={row.domain}
              placeholder="app.example.com"
              inputMode="url"
              aria-invalid={invalid("domain")}
              aria-describedby={d}
              onInput={(e) => set({ domain: e.currentTarget.value })}
              onBlur={() => onBlur("domain")}
              {...TEXT_INPUT}
            />
          )}
        </Cell>
        <Cell name="port" label="Port" error={problems.port}>
          {(id, d) => (
            <input
              id={id}
              type="number"
              min={1}
              max={65535}
              step={1}
              value={row.port}
              aria-invalid={invalid("port")}
              aria-describedby={d}
              onInput={(e) => set({ port: e.currentTarget.value })}
              onBlur={() => onBlur("port")}
            />
          )}
        </Cell>
        <Cell name="path" label="Path" error={problems.path}>
          {(id, d) => (
            <input
              id={id}
              class="mono"
              value={row.path}
              placeholder="/ (whole host)"
              aria-invalid={invalid("path")}
              aria-describedby={d}
              onInput={(e) => set({ path: e.currentTarget.value })}
              onBlur={() => onBlur("path")}
              {...TEXT_INPUT}
            />
          )}
        </Cell>
        <Cell name="tls" label="TLS">
          {(id) => (
            <select id={id} value={row.tls} onChange={(e) => set({ tls: e.currentTarget.value as TlsChoice })}>
              {TLS_CHOICES.map((m) => (
                <option key={m} value={m}>
                  {m === "" ? `server default${server ? ` (${server})` : ""}` : TLS_WORDS[m]}
                </option>
              ))}
            </select>
          )}
        </Cell>
        <button
          type="button"
          class="icon-btn ep-remove"
          aria-label={`Remove endpoint ${n}${row.domain.trim() ? ` (${row.domain.trim()})` : ""}`}
          title="Remove"
          onClick={onRemove}
        >
          <Icon name="x" />
        </button>
      </fieldset>
    </li>
  );
}

export interface EndpointsEditorProps {
  app: AppView;
  run: DeployRun;
  /** An operation is in flight (this one or another): no saving meanwhile. */
  busy: boolean;
  /** The server's TLS mode, named in the "server default" choice. */
  server: TlsMode | undefined;
  /** The rows to start from. */
  initial: EndpointRow[];
  onClose(): void;
}

/** The editor. */
export function EndpointsEditor({ app, run, busy, server, initial, onClose }: EndpointsEditorProps) {
  const slug = app.slug;
  const services = serviceNames(app);
  const [rows, setRows] = useState(initial);
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [attempted, setAttempted] = useState(false);
  const [refusal, setRefusal] = useState<string | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const form = useRef<HTMLFormElement>(null);
  const problems = rowProblems(rows, services);
  const dirty = changed(rows, app.endpoints);

  // a field's problem shows once it was left, or after a save was tried
  const shown = (r: EndpointRow): RowProblems => {
    const all = problems.get(r.id) ?? {};
    if (attempted) return all;
    return Object.fromEntries(Object.entries(all).filter(([f]) => f === "service" || touched.has(`${r.id}:${f}`)));
  };
  const update = (row: EndpointRow) => setRows((rs) => rs.map((r) => (r.id === row.id ? row : r)));

  const save = async (e: Event) => {
    e.preventDefault();
    setRefusal(null);
    setFailed(null);
    setAttempted(true);
    if (problems.size > 0) {
      requestAnimationFrame(() => form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
      return;
    }
    let reason: string | null = null;
    const ok = await run.start(
      slug,
      ENDPOINTS_RUN_LABEL,
      () =>
        api.apps.setEndpoints(slug, bodyOf(rows)).catch((err: Error) => {
          reason = err.message;
          throw err;
        }),
      {
        onDone: (r) => {
          if (r.status === "succeeded") onClose();
          else setFailed(`${outcomeText(ENDPOINTS_RUN_LABEL, r)}${r.error ? `: ${r.error}` : ""}`);
        },
      },
    );
    if (!ok) setRefusal(reason);
  };

  return (
    <form class="card endpoints-editor" aria-label="Edit endpoints" onSubmit={save} ref={form} noValidate>
      <h2>Edit endpoints</h2>
      <p class="muted small">
        One row per host name. Saving writes them as <code>sundeck.*</code> labels into the compose file, as a new version, and
        deploys the app. The port is the container's; the path is a prefix (blank for the whole host).
      </p>
      {rows.length === 0 ? (
        <p class="notice">No endpoints: saving removes every route to this app.</p>
      ) : (
        <ul class="ep-rows" aria-label="Endpoints">
          {rows.map((r, i) => (
            <EditRow
              key={r.id}
              n={i + 1}
              row={r}
              services={services}
              server={server}
              problems={shown(r)}
              onRow={update}
              onService={(s) => update(withService(app, r, s))}
              onBlur={(f) => setTouched((t) => new Set(t).add(`${r.id}:${f}`))}
              onRemove={() => setRows((rs) => rs.filter((x) => x.id !== r.id))}
            />
          ))}
        </ul>
      )}
      <div class="env-tools">
        <button
          type="button"
          class="btn small"
          disabled={services.length === 0}
          onClick={() => setRows((rs) => [...rs, newRow(app)])}
        >
          <Icon name="plus" /> Add endpoint
        </button>
      </div>
      {attempted && problems.size > 0 && (
        <p class="error-text" role="alert">
          Fix the fields marked above: nothing was sent.
        </p>
      )}
      <Refusal reason={refusal} />
      {failed && (
        <p class="error-text" role="alert">
          {failed}. The edits are still here: change them and save again, or cancel.
        </p>
      )}
      <div class="actions">
        <button type="button" class="btn" onClick={onClose}>
          Cancel
        </button>
        <button type="submit" class="btn primary" disabled={busy || !dirty}>
          Save and deploy
        </button>
      </div>
    </form>
  );
}
