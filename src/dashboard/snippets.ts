/**
 * Service snippets in the compose editors: the calls, and what inserting one does to the editor's text and .env
 * (its services and volumes merged in by the shared insertSnippet; its variables added unless the .env has them; a
 * second copy, whose service gets a new name, gets its own variables too: `POSTGRES_PASSWORD_2`).
 */
import { insertSnippet, renameVariables } from "../shared/insert-snippet";
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
  let r = insertSnippet(text, s.compose);
  let values = s.env;
  const ownVars: Record<string, string> = {};
  if (Object.keys(r.renamed.services).length > 0) {
    // a second copy: its variables the .env already has (the first copy's password) get names of their own
    const used = new Set([...haveKeys, ...Object.keys(s.env)]);
    for (const k of Object.keys(s.env)) {
      if (!haveKeys.has(k)) continue;
      let n = 2;
      while (used.has(`${k}_${n}`)) n++;
      used.add((ownVars[k] = `${k}_${n}`));
    }
    if (Object.keys(ownVars).length > 0) {
      r = insertSnippet(text, renameVariables(s.compose, ownVars));
      values = Object.fromEntries(Object.entries(s.env).map(([k, v]) => [ownVars[k] ?? k, v]));
    }
  }
  const env: Record<string, string> = {};
  const kept: string[] = [];
  for (const [k, v] of Object.entries(values)) {
    if (haveKeys.has(k)) kept.push(k);
    else env[k] = v;
  }
  const renamed = Object.entries(r.renamed.services).map(([from, to]) => `${from} as ${to}`);
  const vars = Object.entries(ownVars).map(([from, to]) => `${from} as ${to}`);
  const parts = [
    `Added ${s.name}: service ${list(r.added.services)}${r.added.volumes.length ? `, volume ${list(r.added.volumes)}` : ""}.`,
    renamed.length ? `Renamed to avoid a clash: ${renamed.join(", ")}.` : "",
    vars.length ? `Its own variables: ${vars.join(", ")}.` : "",
    Object.keys(env).length ? `New variables: ${Object.keys(env).join(", ")}.` : "",
    kept.length ? `Already set, kept: ${kept.join(", ")}.` : "",
  ];
  return { text: r.text, env, message: parts.filter(Boolean).join(" ") };
}
