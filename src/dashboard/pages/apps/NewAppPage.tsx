/**
 * New app, from one of three sources: a catalog template (the gallery, then its wizard), a blank compose file, or a
 * compose file uploaded from this computer (read in the browser into the same form). The compose form: slug, compose
 * file, env; Validate checks in the browser, Deploy opens the deploy-logs stream first, then posts, and shows the live
 * output and the outcome. A refused deploy (400) shows the server's reason inline.
 */
import { useMemo, useState } from "preact/hooks";
import { SLUG_MAX } from "../../../shared/slug";
import { api } from "../../api";
import { CodeEditor } from "../../components/CodeEditor";
import { TextField } from "../../components/Field";
import { useResource } from "../../hooks";
import { Link, useLocation } from "../../router";
import { mayMutateApps, useSession } from "../../session";
import { Forbidden } from "../Forbidden";
import { ComposeChecks, Refusal, SERVER_CHECK_NOTE } from "./Checks";
import { DeployConsole } from "./DeployConsole";
import { EnvEditor } from "./EnvEditor";
import { AddService } from "./SnippetPicker";
import { TemplateGallery } from "./TemplateGallery";
import { TemplateWizard } from "./TemplateWizard";
import { useDeployRun } from "./useDeployRun";
import { composeProblems, type EnvRow, envProblems, fromRows, type Problem, slugProblem, toRows } from "./validate";

/** A routed service: the proxy serves it by name (`*.localhost` resolves to this machine in browsers). */
export const COMPOSE_PLACEHOLDER = `services:
  web:
    image: nginx:1.27-alpine
    labels:
      sundeck.domain: hello.localhost
      sundeck.port: "80"`;

/** Where a new app comes from: `/new-app` (templates), `/new-app?from=compose`, `/new-app?from=upload`. */
const SOURCES = [
  { id: "template", label: "From a template", href: "/new-app" },
  { id: "compose", label: "Blank compose file", href: "/new-app?from=compose" },
  { id: "upload", label: "Upload a file", href: "/new-app?from=upload" },
] as const;

/** A compose file picked from this computer, read in the browser (nothing is sent before Deploy). */
function UploadPicker({ onText }: { onText(text: string, name: string): void }) {
  const [error, setError] = useState<string | null>(null);
  const read = async (file: File | undefined) => {
    setError(null);
    if (!file) return;
    if (file.size > 1024 * 1024) {
      setError(`${file.name} is ${Math.round(file.size / 1024)} KiB; a compose file is at most 1 MiB`);
      return;
    }
    onText(await file.text(), file.name);
  };
  return (
    <section class="card upload-picker">
      <div class="field">
        <label for="compose-upload">Compose file (docker-compose.yml, compose.yaml…)</label>
        <input
          id="compose-upload"
          type="file"
          accept=".yml,.yaml,application/yaml,text/yaml,text/plain"
          onChange={(e) => void read(e.currentTarget.files?.[0])}
        />
        <p class="hint">The file opens in the compose form below to check and edit before it is deployed.</p>
      </div>
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

/** The page at /new-app. */
export function NewAppPage() {
  const { me } = useSession();
  const { query } = useLocation();
  const template = query.get("template");
  const from = SOURCES.find((s) => s.id === query.get("from"))?.id ?? "template";
  const [uploaded, setUploaded] = useState<{ text: string; name: string } | null>(null);

  if (!mayMutateApps(me)) return <Forbidden message="Viewers cannot deploy apps." />;

  return (
    <>
      <p class="back">{template ? <Link href="/new-app">← Templates</Link> : <Link href="/apps">← Apps</Link>}</p>
      <div class="page-head">
        <h1>New app</h1>
        <p class="muted">
          {template
            ? "Deploy a template: its settings, how it is reached, then a last look at what is deployed."
            : "Start from a template, or deploy a compose file of your own."}
        </p>
      </div>
      {template ? (
        <TemplateWizard id={template} />
      ) : (
        <>
          <nav class="tabs" aria-label="Source">
            <ul>
              {SOURCES.map((s) => (
                <li key={s.id}>
                  <Link href={s.href} aria-current={s.id === from ? "page" : undefined}>
                    {s.label}
                  </Link>
                </li>
              ))}
            </ul>
          </nav>
          {from === "template" && <TemplateGallery />}
          {from === "compose" && <ComposeForm />}
          {from === "upload" && (
            <>
              <UploadPicker onText={(text, name) => setUploaded({ text, name })} />
              {uploaded && <ComposeForm key={uploaded.name + uploaded.text.length} initial={uploaded.text} />}
            </>
          )}
        </>
      )}
    </>
  );
}

/** The compose form (blank, or with an uploaded file's text). */
function ComposeForm({ initial = "" }: { initial?: string }) {
  const [slug, setSlug] = useState("");
  const [compose, setCompose] = useState(initial);
  const [rows, setRows] = useState<EnvRow[]>([]);
  const [problems, setProblems] = useState<Problem[] | null>(null);
  const [slugError, setSlugError] = useState<string | null>(null);
  const existing = useResource(() => api.apps.list().catch(() => []));
  const run = useDeployRun();
  const exists = useMemo(() => (existing.data ?? []).some((a) => a.slug === slug), [existing.data, slug]);

  const busy = run.state.phase === "starting" || run.state.phase === "running" || run.state.phase === "finishing";
  const check = () => {
    const s = slugProblem(slug);
    const p = composeProblems(compose);
    setSlugError(s);
    setProblems(p);
    return s === null && p.length === 0 && envProblems(rows).size === 0;
  };
  const deploy = async (e: Event) => {
    e.preventDefault();
    if (!check()) return;
    await run.start(slug, "Deploy", () => api.apps.deploy(slug, compose, fromRows(rows)));
  };
  const done = run.state.phase === "done" && run.state.slug;
  // a refusal is about what was sent: it goes once the form changes
  const edited = () => {
    if (run.state.phase === "refused") run.dismiss();
  };

  return (
    <>
      <p class="muted small">Deploy a compose file as a new app. {SERVER_CHECK_NOTE}</p>
      <form class="card app-form" aria-label="New app" onSubmit={deploy} noValidate>
        <TextField
          label="Slug"
          value={slug}
          onValue={(v) => {
            setSlug(v);
            edited();
            if (slugError) setSlugError(slugProblem(v));
          }}
          maxLength={SLUG_MAX}
          autoComplete="off"
          placeholder="my-app"
          hint={
            exists
              ? "An app with this slug exists: deploying replaces its compose file and env."
              : `Lowercase letters, digits and dashes, at most ${SLUG_MAX} characters. The compose project is sundeck-<slug>.`
          }
        />
        {slugError && (
          <p class="error-text" role="alert">
            {slugError}
          </p>
        )}
        <CodeEditor
          label="Compose file"
          value={compose}
          onValue={(v) => {
            setCompose(v);
            edited();
            if (problems) setProblems(null);
          }}
          placeholder={COMPOSE_PLACEHOLDER}
          marked={(problems ?? []).flatMap((p) => (p.line ? [p.line] : []))}
          hint="YAML. Tab indents with two spaces; press Esc, then Tab, to leave the editor."
        />
        <AddService
          text={compose}
          keys={() => new Set(rows.map((x) => x.key.trim()))}
          onInserted={(r) => {
            setCompose(r.text);
            setRows([...rows, ...toRows(r.env)]);
            setProblems(null);
            edited();
          }}
          onProblem={(message) => setProblems([{ message }])}
        />
        <ComposeChecks problems={problems} />
        <EnvEditor
          rows={rows}
          onRows={(r) => {
            setRows(r);
            edited();
          }}
        />
        <Refusal reason={run.state.phase === "refused" ? run.state.refusal : null} />
        <div class="actions">
          <button type="button" class="btn" onClick={() => check()}>
            Validate
          </button>
          <button type="submit" class="btn primary" disabled={busy}>
            {busy ? "Deploying…" : "Deploy"}
          </button>
        </div>
      </form>
      {run.state.phase !== "refused" && <DeployConsole state={run.state} />}
      {done && (
        <p class="next-step">
          <Link href={`/apps/${encodeURIComponent(run.state.slug)}`} class="btn primary">
            Open {run.state.slug}
          </Link>
        </p>
      )}
    </>
  );
}
