/**
 * The template gallery and deploy wizard's pure side: searching the catalog, the slug a template suggests, the routing
 * choice as the API's body, and the calls (list, one, render for review, deploy).
 */
import { formatEnvFile, parseEnvFile } from "../shared/envfile";
import { quickTestHost } from "../shared/quickhost";
import type {
  TemplateDeployAccepted,
  TemplateDetail,
  TemplateRender,
  TemplateRenderBody,
  TemplateSummary,
} from "../shared/templates";
import { request } from "./api";
import type { TlsMode } from "./types";

export type { TemplateDetail, TemplateSummary, TemplateVariable } from "../shared/templates";

const enc = encodeURIComponent;

/** How the wizard routes the template's web page. */
export interface RoutingChoice {
  mode: "quick" | "domain" | "none";
  domain: string;
  /** "" is the default: `local` for a quick test, the server's mode for a domain. */
  tls: "" | TlsMode;
}

/** What the wizard sends (render and deploy take the same body; deploy adds the reviewed text). */
export type WizardBody = TemplateRenderBody & {
  variables: Record<string, string>;
  routing: NonNullable<TemplateRenderBody["routing"]>;
};

/** The rendered files of a template, as the review step edits them. */
export interface Rendered {
  compose: string;
  env: Record<string, string>;
}

/** Templates and their deploy. */
export const templatesApi = {
  list: () => request<TemplateSummary[]>("GET", "/api/templates"),
  get: (id: string) => request<TemplateDetail>("GET", `/api/templates/${enc(id)}`),
  /** The compose file and .env a deploy of `body` would write (secrets left empty generated), for review. */
  render: async (id: string, body: WizardBody): Promise<Rendered> => {
    const r = await request<TemplateRender>("POST", `/api/templates/${enc(id)}/render`, body);
    return { compose: r.compose, env: parseEnvFile(r.env) };
  },
  /** Deploys the reviewed text (as edited) and records the template on the app. */
  deploy: (id: string, body: WizardBody, reviewed: Rendered) =>
    request<TemplateDeployAccepted>("POST", `/api/templates/${enc(id)}/deploy`, {
      ...body,
      compose: reviewed.compose,
      env: formatEnvFile(reviewed.env),
    }),
};

/** Lower-case words of a search box. */
const words = (q: string) => q.toLowerCase().split(/\s+/).filter(Boolean);

/** Templates in `category` ("" for all) whose id, name, description, category or tags hold every word of `query`. */
export function filterTemplates<T extends TemplateSummary>(list: readonly T[], query: string, category: string): T[] {
  const want = words(query);
  return list.filter((t) => {
    if (category && t.category !== category) return false;
    const text = [t.id, t.name, t.description, t.category, ...t.tags].join(" ").toLowerCase();
    return want.every((w) => text.includes(w));
  });
}

/** The catalog's categories, in alphabetical order, each with how many templates it holds. */
export function categoriesOf(list: readonly TemplateSummary[]): Array<{ category: string; count: number }> {
  const counts = new Map<string, number>();
  for (const t of list) counts.set(t.category, (counts.get(t.category) ?? 0) + 1);
  return [...counts].map(([category, count]) => ({ category, count })).sort((a, b) => a.category.localeCompare(b.category));
}

/** The template's id as the slug, or the first `<id>-N` no app has. */
export function suggestSlug(id: string, taken: ReadonlySet<string>): string {
  if (!taken.has(id)) return id;
  for (let n = 2; n < 1000; n++) if (!taken.has(`${id}-${n}`)) return `${id}-${n}`;
  return id;
}

/** The API's routing object of a choice. */
export function routingBody(r: RoutingChoice): WizardBody["routing"] {
  if (r.mode === "none") return { mode: "none" };
  const tls = r.tls ? { tls: r.tls } : {};
  return r.mode === "quick" ? { mode: "quick", ...tls } : { mode: "domain", domain: r.domain.trim().toLowerCase(), ...tls };
}

/** Where the app will answer once deployed: its URL, or null (no route, or no quick-test host yet). */
export function routeUrl(slug: string, r: RoutingChoice, publicHost: string, serverTls: TlsMode): string | null {
  if (r.mode === "none") return null;
  const host = r.mode === "quick" ? quickTestHost(slug, publicHost) : r.domain.trim().toLowerCase();
  if (!host) return null;
  const tls = r.tls || (r.mode === "quick" ? "local" : serverTls);
  return `${tls === "off" || serverTls === "off" ? "http" : "https"}://${host}/`;
}

/** Problems of the variables step: each required value missing, by key (secrets may be left empty: generated). */
export function variableProblems(t: TemplateSummary, values: Record<string, string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const v of t.variables) {
    const value = (values[v.key] ?? "").trim();
    if (!value && v.required && v.type !== "secret" && v.default === null) out.set(v.key, `${v.label} is required`);
    else if (value && v.type === "number" && !/^-?\d+(\.\d+)?$/.test(value)) out.set(v.key, `${v.label} must be a number`);
    else if (value && v.type === "email" && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value))
      out.set(v.key, `${v.label} must be an email address`);
  }
  return out;
}

/** The values the form starts with: each variable's default, secrets empty (generated on the server). */
export function initialValues(t: TemplateSummary): Record<string, string> {
  return Object.fromEntries(t.variables.map((v) => [v.key, v.type === "secret" ? "" : (v.default ?? "")]));
}

/** An inline SVG icon as an image source (an <img> cannot run scripts, whatever the SVG holds). */
export const iconSrc = (svg: string) => `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;

/** What the catalog says of the template an app was made from: a newer version, gone, or nothing to say. */
export type TemplateUpdate =
  | { kind: "newer"; template: TemplateSummary; from: number }
  | { kind: "gone"; id: string }
  | { kind: "current" };

/** Compare the app's `template` with the catalog (no automatic upgrade: the dashboard only tells). */
export function templateUpdate(made: { id: string; version: number } | null, list: readonly TemplateSummary[]): TemplateUpdate {
  if (!made) return { kind: "current" };
  const t = list.find((x) => x.id === made.id);
  if (!t) return { kind: "gone", id: made.id };
  return t.version > made.version ? { kind: "newer", template: t, from: made.version } : { kind: "current" };
}
