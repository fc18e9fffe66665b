/**
 * Insert a service snippet (GET /api/snippets/{id} `compose`) into an app's compose text: its services and volumes are
 * added to the file's own, a name the file already uses gets the first free `-2`, `-3`... suffix (with the snippet's
 * references to it rewritten), and the file's comments and layout are kept. Pure: the dashboard and the server use it.
 */
import { type Document, isMap, isScalar, isSeq, type Node, Pair, parseDocument, Scalar, type YAMLMap } from "yaml";

export interface InsertSnippetOptions {
  /** The name for the snippet's first (main) service instead of its own. */
  serviceName?: string;
}

export interface InsertSnippetResult {
  /** The compose text with the snippet in it. */
  text: string;
  /** The names the snippet's services and volumes have in `text`. */
  added: { services: string[]; volumes: string[] };
  /** Snippet names that were given another one (own name to new name), by `serviceName` or to avoid a clash. */
  renamed: { services: Record<string, string>; volumes: Record<string, string> };
}

/** Service names as compose reads them (src/compose/parse.ts holds Sundeck's own check to the same pattern). */
const SERVICE_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

/** Keys of a service whose `service:<name>` value names another service. */
const SERVICE_REF_KEYS = ["network_mode", "pid", "ipc"];

/** Merge `snippetCompose` into `composeText` (which may be empty); throws an Error saying what is wrong. */
export function insertSnippet(composeText: string, snippetCompose: string, opts: InsertSnippetOptions = {}): InsertSnippetResult {
  if (opts.serviceName !== undefined && !SERVICE_NAME.test(opts.serviceName))
    throw new Error(`service name "${opts.serviceName}" is not valid: letters, digits, "_", "." and "-", not first`);
  const doc = readDoc(composeText, "the compose file");
  const snippet = readDoc(snippetCompose, "the snippet");
  const from = {
    services: section(snippet, "services", "the snippet"),
    volumes: section(snippet, "volumes", "the snippet"),
  };
  if (!from.services?.items.length) throw new Error("the snippet has no services");
  if (!doc.contents) doc.contents = doc.createNode({}) as unknown as typeof doc.contents;
  if (!isMap(doc.contents)) throw new Error("the compose file is not a mapping");

  const services = names(section(doc, "services", "the compose file"));
  const volumes = names(section(doc, "volumes", "the compose file"));
  const serviceMap = pick(names(from.services), services, opts.serviceName);
  const volumeMap = pick(names(from.volumes), volumes);

  const addedServices = into(doc, "services");
  for (const pair of from.services.items) {
    const value = (pair.value as Node | null)?.clone() ?? null;
    if (isMap(value)) rewriteReferences(value, serviceMap, volumeMap);
    addedServices.items.push(new Pair(new Scalar(serviceMap.get(keyOf(pair))!), value));
  }
  if (from.volumes?.items.length) {
    const addedVolumes = into(doc, "volumes");
    for (const pair of from.volumes.items)
      addedVolumes.items.push(new Pair(new Scalar(volumeMap.get(keyOf(pair))!), (pair.value as Node | null)?.clone() ?? null));
  }

  return {
    text: doc.toString({ indent: indentOf(composeText), lineWidth: 0, flowCollectionPadding: false }),
    added: { services: [...serviceMap.values()], volumes: [...volumeMap.values()] },
    renamed: { services: changed(serviceMap), volumes: changed(volumeMap) },
  };
}

function readDoc(text: string, what: string): Document {
  const doc = parseDocument(text, { uniqueKeys: true });
  const err = doc.errors[0];
  if (err) throw new Error(`${what} is not valid YAML: ${err.message.split("\n")[0]}`);
  return doc;
}

/** A top-level mapping (`services`, `volumes`), null when absent or empty; throws when it is something else. */
function section(doc: Document, key: string, what: string): YAMLMap | null {
  if (!isMap(doc.contents)) return null;
  const node = doc.contents.get(key, true);
  if (node === undefined || node === null || (isScalar(node) && node.value === null)) return null;
  if (!isMap(node)) throw new Error(`${what}: ${key} is not a mapping`);
  return node;
}

/** The mapping at `key` to add to, made (block style) when the file has none or an empty one. */
function into(doc: Document, key: string): YAMLMap {
  const root = doc.contents as YAMLMap;
  const node: unknown = root.get(key, true);
  const map = isMap(node) ? node : (doc.createNode({}) as YAMLMap);
  if (map !== node) root.set(key, map);
  if (!map.items.length) map.flow = false;
  return map;
}

const keyOf = (pair: Pair): string => String(isScalar(pair.key) ? pair.key.value : pair.key);
const names = (map: YAMLMap | null): string[] => (map?.items ?? []).map(keyOf);

/** Each own name to the name it gets: `wanted` (for the first) or its own, suffixed past the names in use. */
function pick(own: string[], taken: string[], wanted?: string): Map<string, string> {
  const used = new Set(taken);
  const out = new Map<string, string>();
  own.forEach((name, i) => {
    const base = i === 0 && wanted ? wanted : name;
    let n = base;
    for (let k = 2; used.has(n); k++) n = `${base}-${k}`;
    used.add(n);
    out.set(name, n);
  });
  return out;
}

function changed(map: Map<string, string>): Record<string, string> {
  return Object.fromEntries([...map].filter(([a, b]) => a !== b));
}

/** A reference in a string: the name, and the text before and after it. */
type Split = (s: string) => { pre: string; name: string; post: string };
const whole: Split = (s) => ({ pre: "", name: s, post: "" });
const upToColon: Split = (s) => {
  const i = s.indexOf(":");
  return i < 0 ? whole(s) : { pre: "", name: s.slice(0, i), post: s.slice(i) };
};
const afterService: Split = (s) =>
  s.startsWith("service:") ? { pre: "service:", name: s.slice(8), post: "" } : { pre: s, name: "", post: "" };

/** Rewrite, inside one snippet service, the names of the snippet's own services and volumes it refers to. */
function rewriteReferences(svc: YAMLMap, services: Map<string, string>, volumes: Map<string, string>) {
  const rename = (node: unknown, map: Map<string, string>, split: Split) => {
    if (!isScalar(node) || typeof node.value !== "string") return;
    const { pre, name, post } = split(node.value);
    const to = map.get(name);
    if (to !== undefined && to !== name) node.value = pre + to + post;
  };
  const dependsOn = svc.get("depends_on", true);
  if (isSeq(dependsOn)) for (const item of dependsOn.items) rename(item, services, whole);
  if (isMap(dependsOn)) for (const pair of dependsOn.items) rename(pair.key, services, whole);
  for (const key of ["links", "volumes_from"]) {
    const list = svc.get(key, true);
    if (isSeq(list)) for (const item of list.items) rename(item, services, upToColon);
  }
  for (const key of SERVICE_REF_KEYS) rename(svc.get(key, true), services, afterService);
  const ext = svc.get("extends", true);
  if (isMap(ext) && !ext.has("file")) rename(ext.get("service", true), services, whole);
  const mounts = svc.get("volumes", true);
  if (isSeq(mounts))
    for (const item of mounts.items)
      rename(isMap(item) ? item.get("source", true) : item, volumes, isMap(item) ? whole : upToColon);
}

/** `$$` (an escaped dollar), `${NAME...}` or `$NAME`: compose's interpolations, as a rename reads them. */
const INTERPOLATION = /\$(\$|\{([A-Za-z_][A-Za-z0-9_]*)|([A-Za-z_][A-Za-z0-9_]*))/g;

/**
 * Rename variables where compose interpolates them (`${NAME}`, `${NAME:-default}` and the other forms, `$NAME`),
 * leaving `$$NAME` alone: that is the container's own variable, read at run time.
 */
export function renameVariables(text: string, map: Readonly<Record<string, string>>): string {
  return text.replace(INTERPOLATION, (m, _all, braced: string | undefined, bare: string | undefined) => {
    const name = braced ?? bare;
    const to = name === undefined ? undefined : map[name];
    if (to === undefined) return m;
    return braced !== undefined ? `\${${to}` : `$${to}`;
  });
}

/** The indentation the file already uses (2 when it shows none). */
function indentOf(text: string): number {
  const m = /^( +)[^\s#-]/m.exec(text);
  const n = m ? m[1].length : 2;
  return n >= 2 && n <= 8 ? n : 2;
}
