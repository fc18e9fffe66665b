/**
 * Local apps against the server's: fetch an app's compose and env, render the unified diffs of both files, and plan
 * a sync (create, update, unchanged, only on the server). Env values are masked in diffs unless asked for.
 */
import { relative } from "node:path";
import type { Api } from "./api";
import { unifiedDiff } from "./diff";
import { envText, type LocalApp } from "./local";

/** An app's content on the server; env values are null when the caller may not see them. */
export interface ServerApp {
  slug: string;
  compose: string;
  env: Record<string, string | null>;
}

/** The compose file and env of a server app, or null when there is no such app. */
export async function fetchServerApp(api: Api, slug: string): Promise<ServerApp | null> {
  const p = `/apps/${encodeURIComponent(slug)}`;
  const compose = await api.maybe<{ compose: string }>("GET", `${p}/compose`);
  if (!compose) return null;
  const env = (await api.maybe<Record<string, string | null>>("GET", `${p}/env`)) ?? {};
  return { slug, compose: compose.compose, env };
}

/** `.env` text for display: values shown, or masked kubectl-style (`***`, and which side when they differ). */
function shownEnv(env: Record<string, string | null>, other: Record<string, string | null>, side: string, show: boolean) {
  let text = "";
  for (const [k, v] of Object.entries(env)) {
    if (v !== null && (show || v === "")) text += envText({ [k]: v });
    else text += `${k}=${v !== null && other[k] !== v ? `*** (${side})` : "***"}\n`;
  }
  return text;
}

/** Whether the local app differs from the server's, and in which files. */
export function changes(local: LocalApp, server: ServerApp): string[] {
  const what: string[] = [];
  if (local.compose !== server.compose) what.push("compose");
  if (local.env) {
    const known = Object.fromEntries(Object.entries(server.env).map(([k, v]) => [k, v ?? ""]));
    if (envText(local.env) !== envText(known)) what.push("env");
  }
  return what;
}

/** The unified diff from the server's files to the local ones ("" when equal); an absent local .env is not compared. */
export function appDiff(local: LocalApp, server: ServerApp, o: { showValues?: boolean } = {}): string {
  const rel = (p: string) => relative(process.cwd(), p) || p;
  let text = unifiedDiff(server.compose, local.compose, {
    old: `server/${server.slug}/docker-compose.yml`,
    new: rel(local.composePath),
  });
  if (local.env && local.envPath) {
    const show = !!o.showValues;
    text += unifiedDiff(shownEnv(server.env, local.env, "server", show), shownEnv(local.env, server.env, "local", show), {
      old: `server/${server.slug}/.env`,
      new: rel(local.envPath),
    });
  }
  return text;
}

/** What a sync of `locals` would do. */
export interface Plan {
  create: LocalApp[];
  update: Array<{ app: LocalApp; what: string[] }>;
  unchanged: LocalApp[];
  /** Server apps with no local directory. */
  extra: string[];
}

/** Compare every local app with the server. */
export async function planSync(api: Api, locals: LocalApp[]): Promise<Plan> {
  const remote = new Set((await api.get<Array<{ slug: string }>>("/apps")).map((a) => a.slug));
  const plan: Plan = { create: [], update: [], unchanged: [], extra: [] };
  for (const app of locals) {
    const server = remote.has(app.slug) ? await fetchServerApp(api, app.slug) : null;
    if (!server) {
      plan.create.push(app);
      continue;
    }
    const what = changes(app, server);
    if (what.length) plan.update.push({ app, what });
    else plan.unchanged.push(app);
  }
  const local = new Set(locals.map((a) => a.slug));
  plan.extra = [...remote].filter((s) => !local.has(s)).sort();
  return plan;
}
