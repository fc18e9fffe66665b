/**
 * Service snippets in the compose editors: the calls, and what inserting one does to the editor's text and .env
 * (its services and volumes merged in by the shared insertSnippet; its variables added unless the .env has them).
 */
import { insertSnippet } from "../shared/insert-snippet";
import type { SnippetDetail, SnippetSummary } from "../shared/snippets";
import { request } from "./api";

const enc = encodeURIComponent;

/** A snippet with a value for each of its variables (secrets freshly generated on the server). */
export type SnippetWithValues = SnippetDetail & { env: Record<string, string> };

export const snippetsApi = {
  list: () => request<SnippetSummary[]>("GET", "/api/snippets"),
  withValues: (id: string) => request<SnippetWithValues>("GET", `/api/snippets/${enc(id)}?generate=true`),
};

/** The outcome of inserting a snippet. */
export interface Inserted {
  text: string;
  /** Variables to add to the .env (those it does not hold yet). */
  env: Record<string, string>;
  /** One line for the user: what was added, under which names, and which variables were already set. */
  message: string;
}

const list = (names: string[]) => names.map((n) => `"${n}"`).join(", ");

/** Insert `s` into `text`; `haveKeys` are the .env's names (kept as they are). Throws when the text is not a compose file. */
export function applySnippet(text: string, s: SnippetWithValues, haveKeys: ReadonlySet<string>): Inserted {
  const r = insertSnippet(text, s.compose);
  const env: Record<string, string> = {};
  const kept: string[] = [];
  for (const [k, v] of Object.entries(s.env)) {
    if (haveKeys.has(k)) kept.push(k);
    else env[k] = v;
  }
  const renamed = Object.entries(r.renamed.services).map(([from, to]) => `${from} as ${to}`);
  const parts = [
    `Added ${s.name}: service ${list(r.added.services)}${r.added.volumes.length ? `, volume ${list(r.added.volumes)}` : ""}.`,
    renamed.length ? `Renamed to avoid a clash: ${renamed.join(", ")}.` : "",
    Object.keys(env).length ? `New variables: ${Object.keys(env).join(", ")}.` : "",
    kept.length ? `Already set, kept: ${kept.join(", ")}.` : "",
  ];
  return { text: r.text, env, message: parts.filter(Boolean).join(" ") };
}
