/**
 * The deploy wizard of one template: settings (slug, variables: secrets hidden with a reveal toggle, generated on the
 * server when left empty) → routing (quick test, custom domain with its TLS mode, none; the quick test explains
 * public_host and lets a super admin save it) → review (the rendered compose file and .env, editable, secrets
 * regenerable, and the batteries: a daily backup and an app_down alert for templates with a database) → deploy with
 * the live log. What is deployed is exactly what the review step shows.
 */
import { useMemo, useState } from "preact/hooks";
import { quickTestHost } from "../../../shared/quickhost";
import { SLUG_MAX } from "../../../shared/slug";
import { api } from "../../api";
import { CodeEditor } from "../../components/CodeEditor";
import { ErrorText, SelectField, TextField } from "../../components/Field";
import { useResource } from "../../hooks";
import { Link } from "../../router";
import { isSuperAdmin, useSession } from "../../session";
import { useSystemInfo } from "../../sysinfo";
import {
  iconSrc,
  initialValues,
  type Rendered,
  type RoutingChoice,
  routeUrl,
  routingBody,
  suggestSlug,
  type TemplateDetail,
  templatesApi,
  variableProblems,
  type WizardBody,
} from "../../templates";
import { Refusal } from "./Checks";
import { DeployConsole } from "./DeployConsole";
import { EnvEditor } from "./EnvEditor";
import { useDeployRun } from "./useDeployRun";
import { type EnvRow, envProblems, fromRows, slugProblem, toRows } from "./validate";
import { PublicHostNote, ROUTING_CHOICES, type Step, Steps, TLS_OPTIONS, VariableField } from "./WizardParts";

interface Props {
  id: string;
}

/** The wizard at /new-app?template=ID. */
export function TemplateWizard({ id }: Props) {
  const { me } = useSession();
  const info = useSystemInfo();
  const template = useResource(() => templatesApi.get(id), [id]);
  const apps = useResource(() => api.apps.list().catch(() => []));
  const publicHost = useResource(() => api.settings.publicHost());
  const t = template.data;
  if (template.error) return <ErrorText error={template.error} />;
  if (!t || !apps.data || !publicHost.data) return <p class="muted">Loading…</p>;
  return (
    <Wizard
      key={t.id}
      t={t}
      taken={new Set(apps.data.map((a) => a.slug))}
      publicHost={publicHost.data.public_host}
      onPublicHost={(h) => publicHost.set({ public_host: h })}
      canSetHost={isSuperAdmin(me)}
      serverTls={info.data?.tls_mode ?? "auto"}
    />
  );
}

interface WizardProps {
  t: TemplateDetail;
  taken: ReadonlySet<string>;
  publicHost: string;
  onPublicHost(h: string): void;
  canSetHost: boolean;
  serverTls: "auto" | "custom" | "local" | "off";
}

function Wizard({ t, taken, publicHost, onPublicHost, canSetHost, serverTls }: WizardProps) {
  const [step, setStep] = useState<Step>("Settings");
  const [slug, setSlug] = useState(() => suggestSlug(t.id, taken));
  const [values, setValues] = useState(() => initialValues(t));
  const [routing, setRouting] = useState<RoutingChoice>(() => ({
    // the first minute: a quick test, whose step explains public_host when it is not set yet
    mode: t.web ? "quick" : "none",
    domain: "",
    tls: "",
  }));
  const withDb = t.database !== null;
  const [batteries, setBatteries] = useState({ backup: withDb, alert: withDb });
  const [compose, setCompose] = useState("");
  const [rows, setRows] = useState<EnvRow[]>([]);
  const [busyRender, setBusyRender] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [tried, setTried] = useState(false);
  /** Batteries the deploy was asked for but could not make (the deploy stands). */
  const [notMade, setNotMade] = useState<string[]>([]);
  const run = useDeployRun();

  const problems = variableProblems(t, values);
  const slugError = slugProblem(slug) ?? (taken.has(slug) ? `An app named ${slug} exists: choose another slug` : null);
  const body = (vars: Record<string, string> = values): WizardBody => ({
    slug,
    variables: Object.fromEntries(Object.entries(vars).filter(([, v]) => v !== "")),
    routing: routingBody(routing),
    ...(withDb ? { batteries } : {}),
  });
  const url = useMemo(() => routeUrl(slug, routing, publicHost, serverTls), [slug, routing, publicHost, serverTls]);

  const render = async (): Promise<Rendered | null> => {
    setError(null);
    setBusyRender(true);
    try {
      return await templatesApi.render(t.id, body());
    } catch (e) {
      setError((e as Error).message);
      return null;
    } finally {
      setBusyRender(false);
    }
  };
  const toReview = async () => {
    const r = await render();
    if (!r) return;
    setCompose(r.compose);
    setRows(toRows(r.env));
    setStep("Review");
  };
  /** A new value for one secret, made by the server as at deploy; the rest of the review is kept. */
  const regenerate = async (key: string) => {
    setError(null);
    const current = fromRows(rows);
    const vars = Object.fromEntries(t.variables.map((v) => [v.key, v.key === key ? "" : (current[v.key] ?? "")]));
    try {
      const r = await templatesApi.render(t.id, body(vars));
      const value = r.env[key] ?? "";
      setRows(rows.map((row) => (row.key === key ? { ...row, value } : row)));
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const deploy = async () => {
    setStep("Deploy");
    setNotMade([]);
    await run.start(slug, "Deploy", async () => {
      const accepted = await templatesApi.deploy(t.id, body(), { compose, env: fromRows(rows) });
      setNotMade(accepted.batteries?.failed ?? []);
      return accepted;
    });
  };
  const refused = run.state.phase === "refused";
  const succeeded = run.state.phase === "done" && run.state.result?.status === "succeeded";

  const next = (e: Event) => {
    e.preventDefault();
    setTried(true);
    if (step === "Settings") {
      if (slugError || problems.size > 0) return;
      setTried(false);
      if (t.web) setStep("Routing");
      else void toReview();
    } else if (step === "Routing") {
      // the server checks the name (its 400 is shown); an empty one needs no round trip
      if (routing.mode === "domain" && routing.domain.trim() === "") return;
      if (routing.mode === "quick" && !quickTestHost(slug, publicHost)) return;
      void toReview();
    } else if (step === "Review") {
      if (envProblems(rows).size > 0) return;
      void deploy();
    }
  };
  const back = () => {
    setError(null);
    if (step === "Routing") setStep("Settings");
    else if (step === "Review") setStep(t.web ? "Routing" : "Settings");
    else if (step === "Deploy" && refused) {
      run.dismiss();
      setStep("Review");
    }
  };

  return (
    <>
      <div class="wizard-head">
        <img class="template-icon" src={iconSrc(t.icon)} alt="" width={48} height={48} />
        <div>
          <h2 class="wizard-title">{t.name}</h2>
          <p class="muted small wizard-title">{t.description}</p>
        </div>
      </div>
      <Steps step={step} />
      <form class="card app-form wizard" aria-label={`Deploy ${t.name}`} onSubmit={next} noValidate>
        {step === "Settings" && (
          <>
            <TextField
              label="Slug"
              value={slug}
              onValue={setSlug}
              maxLength={SLUG_MAX}
              autoComplete="off"
              hint={`The app's name: lowercase letters, digits and dashes. The compose project is sundeck-${slug || "<slug>"}.`}
            />
            {slugError && (tried || slug !== "") && <p class="error-inline small">{slugError}</p>}
            {t.variables.length === 0 && <p class="muted">This template has no settings.</p>}
            {t.variables.map((v) => (
              <VariableField
                key={v.key}
                v={v}
                value={values[v.key] ?? ""}
                problem={tried ? problems.get(v.key) : undefined}
                onValue={(x) => setValues({ ...values, [v.key]: x })}
              />
            ))}
          </>
        )}
        {step === "Routing" && (
          <fieldset class="routing-choice">
            <legend>How visitors reach {t.name}</legend>
            {ROUTING_CHOICES.map((c) => (
              <label key={c.mode} class="check choice">
                <input
                  type="radio"
                  name="routing"
                  checked={routing.mode === c.mode}
                  onChange={() => setRouting({ ...routing, mode: c.mode })}
                />
                <span>
                  <strong>{c.label}</strong> <span class="muted">{c.detail}</span>
                </span>
              </label>
            ))}
            {routing.mode === "quick" && (
              <PublicHostNote publicHost={publicHost} slug={slug} canSet={canSetHost} onSaved={onPublicHost} />
            )}
            {routing.mode === "domain" && (
              <>
                <TextField
                  label="Domain"
                  value={routing.domain}
                  onValue={(d) => setRouting({ ...routing, domain: d })}
                  placeholder="app.example.com"
                  autoComplete="off"
                  hint="Point its DNS A/AAAA record at this server first; with TLS auto the certificate is ordered at deploy."
                />
                {tried && routing.domain.trim() === "" && <p class="error-inline small">Enter a domain</p>}
              </>
            )}
            {routing.mode !== "none" && (
              <SelectField
                label="TLS"
                value={routing.tls}
                onValue={(v) => setRouting({ ...routing, tls: v as RoutingChoice["tls"] })}
                options={TLS_OPTIONS.map((o) =>
                  o.value === ""
                    ? { value: "", label: routing.mode === "quick" ? "Default (local)" : `Default (server: ${serverTls})` }
                    : o,
                )}
              />
            )}
          </fieldset>
        )}
        {step === "Review" && (
          <>
            {url && (
              <p>
                The app will answer at <code>{url}</code>.
              </p>
            )}
            {withDb && (
              <fieldset class="batteries">
                <legend>Included</legend>
                <label class="check choice">
                  <input
                    type="checkbox"
                    checked={batteries.backup}
                    onChange={(e) => setBatteries({ ...batteries, backup: e.currentTarget.checked })}
                  />
                  <span>
                    A daily backup of the database ({t.database?.strategy} of <code>{t.database?.service}</code>) to this server,
                    the last 7 kept
                  </span>
                </label>
                <label class="check choice">
                  <input
                    type="checkbox"
                    checked={batteries.alert}
                    onChange={(e) => setBatteries({ ...batteries, alert: e.currentTarget.checked })}
                  />
                  <span>An alert when the app goes down (app_down)</span>
                </label>
                <p class="hint">Both become ordinary settings of the app, changed or removed in its Backups tab and on Alerts.</p>
              </fieldset>
            )}
            <CodeEditor
              label="Compose file"
              value={compose}
              onValue={setCompose}
              rows={14}
              hint="As it will be deployed; edit if you need to."
            />
            <EnvEditor rows={rows} onRows={setRows} legend="Environment (.env)" />
            {t.variables.some((v) => v.type === "secret") && (
              <div class="regenerate">
                {t.variables
                  .filter((v) => v.type === "secret")
                  .map((v) => (
                    <button key={v.key} type="button" class="btn small" onClick={() => void regenerate(v.key)}>
                      Regenerate {v.key}
                    </button>
                  ))}
              </div>
            )}
            {t.notes && (
              <div class="template-notes">
                <h3 class="template-notes-title">Notes</h3>
                <p class="small template-notes-text">{t.notes}</p>
              </div>
            )}
          </>
        )}
        {step === "Deploy" && (
          <>
            <Refusal reason={refused ? run.state.refusal : null} />
            {!refused && <DeployConsole state={run.state} />}
            {notMade.length > 0 && (
              <div class="notice warn" role="note">
                {notMade.map((line) => (
                  <p key={line}>{line}</p>
                ))}
              </div>
            )}
            {succeeded && (
              <p class="next-step">
                {url && (
                  <a href={url} target="_blank" rel="noopener noreferrer" class="btn">
                    Visit {url}
                  </a>
                )}{" "}
                <Link href={`/apps/${encodeURIComponent(slug)}`} class="btn primary">
                  Open {slug}
                </Link>
              </p>
            )}
          </>
        )}
        <ErrorText error={error} />
        {(step !== "Deploy" || refused) && (
          <div class="actions">
            {step !== "Settings" && (
              <button type="button" class="btn" onClick={back}>
                Back
              </button>
            )}
            {step !== "Deploy" && (
              <button type="submit" class="btn primary" disabled={busyRender}>
                {step === "Review" ? "Deploy" : busyRender ? "Preparing…" : "Next"}
              </button>
            )}
          </div>
        )}
      </form>
    </>
  );
}
