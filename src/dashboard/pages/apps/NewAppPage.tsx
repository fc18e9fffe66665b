/**
 * New app: slug, compose file, env; Validate checks in the browser, Deploy opens the deploy-logs stream first, then
 * posts, and shows the live output and the outcome. A refused deploy (400) shows the server's reason inline.
 */
import { useMemo, useState } from "preact/hooks";
import { SLUG_MAX } from "../../../shared/slug";
import { api } from "../../api";
import { CodeEditor } from "../../components/CodeEditor";
import { TextField } from "../../components/Field";
import { useResource } from "../../hooks";
import { Link } from "../../router";
import { mayMutateApps, useSession } from "../../session";
import { Forbidden } from "../Forbidden";
import { ComposeChecks, Refusal, SERVER_CHECK_NOTE } from "./Checks";
import { DeployConsole } from "./DeployConsole";
import { EnvEditor } from "./EnvEditor";
import { useDeployRun } from "./useDeployRun";
import { composeProblems, type EnvRow, envProblems, fromRows, type Problem, slugProblem } from "./validate";

/** A routed service: the proxy serves it by name (`*.localhost` resolves to this machine in browsers). */
export const COMPOSE_PLACEHOLDER = `services:
  web:
    image: nginx:1.27-alpine
    labels:
      sundeck.domain: hello.localhost
      sundeck.port: "80"`;

/** The page at /new-app. */
export function NewAppPage() {
  const { me } = useSession();
  const [slug, setSlug] = useState("");
  const [compose, setCompose] = useState("");
  const [rows, setRows] = useState<EnvRow[]>([]);
  const [problems, setProblems] = useState<Problem[] | null>(null);
  const [slugError, setSlugError] = useState<string | null>(null);
  const existing = useResource(() => api.apps.list().catch(() => []));
  const run = useDeployRun();
  const exists = useMemo(() => (existing.data ?? []).some((a) => a.slug === slug), [existing.data, slug]);

  if (!mayMutateApps(me)) return <Forbidden message="Viewers cannot deploy apps." />;

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
      <p class="back">
        <Link href="/apps">← Apps</Link>
      </p>
      <div class="page-head">
        <h1>New app</h1>
        <p class="muted">Deploy a compose file as a new app. {SERVER_CHECK_NOTE}</p>
      </div>
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
