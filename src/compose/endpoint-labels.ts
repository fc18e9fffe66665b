/**
 * Rewriting an app's routing labels in its compose text (PUT /api/apps/{slug}/endpoints): every `sundeck.domain|port|
 * path|tls` and `sundeck.endpoints.*` label is replaced by the endpoints asked for, the rest of the file left as written.
 */
import { isAlias, isMap, isScalar, isSeq, type Node, Pair, parseDocument, Scalar, YAMLMap, type YAMLSeq } from "yaml";
import { parseAppLabels } from "./labels";
import { ComposeError, type ComposeProject, type Endpoint } from "./model";
import { isRecord, keyValues } from "./values";
import { plainSafe } from "./yaml";

/** One endpoint as the API asks for it: one host, a normalised path ("/" when none), TLS null for the default. */
export interface EndpointEntry {
  service: string;
  domain: string;
  port: number;
  path: string;
  tls: Endpoint["tls"];
}

const ROUTING_LABEL = /^sundeck\.(?:domain|port|path|tls|endpoints\..*)$/;

/** Whether a label key is a routing label (the ones this rewrite owns). */
export const isRoutingLabel = (key: string) => ROUTING_LABEL.test(key);

const keyText = (k: unknown): string | null => (isScalar(k) ? String(k.value) : typeof k === "string" ? k : null);
/** The key of a `KEY=VALUE` list item. */
const itemKey = (item: unknown): string | null => (isScalar(item) ? String(item.value).split("=")[0] : null);

/** The labels one service gets: the plain `sundeck.*` set for one endpoint, numbered `sundeck.endpoints.<n>.*` for more. */
export function endpointLabels(entries: EndpointEntry[]): [string, string][] {
  return entries.flatMap((e, i) => {
    const prefix = entries.length === 1 ? "sundeck." : `sundeck.endpoints.${i + 1}.`;
    const out: [string, string][] = [
      [`${prefix}domain`, e.domain],
      [`${prefix}port`, String(e.port)],
    ];
    if (e.path !== "/") out.push([`${prefix}path`, e.path]);
    if (e.tls) out.push([`${prefix}tls`, e.tls]);
    return out;
  });
}

/**
 * The file's layout, for toString: its indentation (of the first nested line), whether sequences under a key are
 * indented, and whether flow collections are written `[ a ]` (the library's default) or `[a]`.
 */
export function layoutOf(text: string): { indent: number; indentSeq: boolean; flowCollectionPadding: boolean } {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== "" && !l.trimStart().startsWith("#"));
  const lead = (l: string) => l.length - l.trimStart().length;
  let indent = 0;
  let indentSeq: boolean | null = null;
  for (let i = 1; i < lines.length && (indent === 0 || indentSeq === null); i++) {
    const [prev, line] = [lines[i - 1], lines[i]];
    if (!/:\s*(#.*)?$/.test(prev) || prev.trimStart().startsWith("- ")) continue;
    if (indent === 0 && lead(prev) === 0 && lead(line) > 0 && !line.trimStart().startsWith("-")) indent = lead(line);
    if (indentSeq === null && line.trimStart().startsWith("- ")) indentSeq = lead(line) > lead(prev);
  }
  const padded = /(?::|-) [[{] \S/.test(text) && !/(?::|-) [[{][^\s\]}]/.test(text);
  return { indent: indent > 0 && indent <= 8 ? indent : 2, indentSeq: indentSeq ?? true, flowCollectionPadding: padded };
}

function scalar(value: string, type: Scalar.Type): Scalar {
  const s = new Scalar(value);
  s.type = type;
  return s;
}

/** Label pairs for a map: keys plain, values plain only where every YAML reader takes them for the same string. */
const pairs = (labels: [string, string][]) =>
  labels.map(([k, v]) => new Pair(scalar(k, "PLAIN"), scalar(v, plainSafe(v) ? "PLAIN" : "QUOTE_DOUBLE")));

/** Replace the routing labels of a map or list of labels in place, the new ones where the first old one stood. */
function replaceIn(node: YAMLMap | YAMLSeq, labels: [string, string][]): void {
  const items = node.items as unknown[];
  const routing = (item: unknown) => isRoutingLabel((isMap(node) ? keyText((item as Pair).key) : itemKey(item)) ?? "");
  const first = items.findIndex(routing);
  const kept = items.filter((item) => !routing(item));
  const at = first < 0 ? kept.length : items.slice(0, first).filter((item) => !routing(item)).length;
  // list items keep the quoting the list already uses
  const like = items.find(isScalar)?.type;
  const style = like === "PLAIN" || like === "QUOTE_SINGLE" ? like : "QUOTE_DOUBLE";
  const fresh = isMap(node) ? pairs(labels) : labels.map(([k, v]) => scalar(`${k}=${v}`, style));
  if (items.length === 0 && fresh.length) node.flow = false;
  kept.splice(at, 0, ...fresh);
  // a comment above the old routing labels stays above what now stands there
  const lead = (item: unknown) => (isMap(node) && item ? (item as Pair).key : item) as Node | undefined;
  const from = first < 0 ? undefined : lead(items[first]);
  const to = lead(kept[at]);
  if (from?.commentBefore && to && isScalar(to) && !to.commentBefore) {
    to.commentBefore = from.commentBefore;
    to.spaceBefore = from.spaceBefore;
  }
  node.items = kept as never;
}

/** Rewrite one service's labels; `labels` empty removes its routing. */
function rewriteService(svc: YAMLMap, name: string, labels: [string, string][]): void {
  const pair = svc.items.find((p) => keyText(p.key) === "labels");
  const node = pair?.value as Node | null | undefined;
  if (isMap(node) || isSeq(node)) {
    const had = node.items.length;
    replaceIn(node, labels);
    // labels that were only routing go with it; the key stays while anything is left (or it was empty already)
    if (had > 0 && node.items.length === 0) svc.items.splice(svc.items.indexOf(pair!), 1);
    return;
  }
  if (node === undefined || node === null || (isScalar(node) && (node.value === "" || node.value === null))) {
    if (!labels.length) return;
    const map = new YAMLMap();
    map.items = pairs(labels);
    if (pair) pair.value = map;
    else svc.items.push(new Pair(scalar("labels", "PLAIN"), map));
    return;
  }
  if (isAlias(node)) {
    throw new ComposeError(name, "label", `its labels are the YAML alias *${node.source}; edit the compose file to change them`);
  }
  throw new ComposeError(name, "schema", "labels must be a list or a mapping");
}

/**
 * The compose text with the app's routing labels replaced by `entries`, comments and layout kept as far as the YAML
 * library re-renders them. Scalars are read with the failsafe schema so every value is written back as it stood
 * (`0400`, `on`, `0x1F`). A service not in the file, or one whose labels cannot be edited in place, is a ComposeError.
 */
export function writeEndpointLabels(compose: string, entries: EndpointEntry[]): string {
  const doc = parseDocument(compose, { schema: "failsafe", version: "1.2" });
  if (doc.errors.length) throw new ComposeError(null, "yaml", `invalid yaml: ${doc.errors[0].message.split("\n")[0]}`);
  const services = doc.get("services", true);
  if (!isMap(services)) throw new ComposeError(null, "schema", "the compose file has no services");
  const wanted = new Map<string, EndpointEntry[]>();
  for (const e of entries) wanted.set(e.service, [...(wanted.get(e.service) ?? []), e]);
  const names = new Set(services.items.map((p) => keyText(p.key)));
  for (const name of wanted.keys()) if (!names.has(name)) throw new ComposeError(name, "label", "no such service");
  for (const p of services.items) {
    const name = keyText(p.key) ?? "";
    const labels = endpointLabels(wanted.get(name) ?? []);
    if (isMap(p.value)) rewriteService(p.value, name, labels);
    else if (labels.length) throw new ComposeError(name, "label", "the service is not a mapping; edit the compose file");
  }
  const out = doc.toString({ ...layoutOf(compose), lineWidth: 0 });
  return compose.includes("\r\n") ? out.replace(/\r?\n/g, "\r\n") : out;
}

/** Entries as comparable text, one per host, sorted. */
function entryKeys(entries: EndpointEntry[]): string[] {
  return entries.map((e) => JSON.stringify([e.service, e.domain, e.port, e.path, e.tls])).sort();
}

/** An app's endpoints as entries, one per host. */
export function entriesOf(endpoints: Endpoint[]): EndpointEntry[] {
  return endpoints.flatMap((e) =>
    e.hosts.map((domain) => ({ service: e.service, domain, port: e.port, path: e.path, tls: e.tls })),
  );
}

/** Whether two endpoint lists route the same (order aside). */
export function sameEntries(a: EndpointEntry[], b: EndpointEntry[]): boolean {
  return JSON.stringify(entryKeys(a)) === JSON.stringify(entryKeys(b));
}

/** The document with every service's routing labels taken out (labels as a sorted map, none as absent). */
function withoutRouting(doc: Record<string, any>): Record<string, any> {
  const services = isRecord(doc.services) ? doc.services : {};
  const out: Record<string, any> = {};
  for (const [name, svc] of Object.entries(services)) {
    if (!isRecord(svc)) {
      out[name] = svc;
      continue;
    }
    const { labels, ...rest } = svc;
    const kept = keyValues(labels)
      .filter(([k]) => !isRoutingLabel(k))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    out[name] = kept.length ? { ...rest, labels: kept } : rest;
  }
  return { ...doc, services: out };
}

/**
 * Why the rewritten project does not do exactly what was asked, or null: its endpoints must read back as `entries`,
 * and everything else (other labels, every other key) must be what it was. Labels that come from merge keys, anchors
 * or `extends` are where this can fail.
 */
export function rewriteProblem(before: ComposeProject, after: ComposeProject, entries: EndpointEntry[]): string | null {
  if (!sameEntries(entriesOf(parseAppLabels(after).endpoints), entries)) {
    return "the compose file sets routing labels this cannot rewrite (through an anchor, a merge key or extends); edit the file instead";
  }
  if (JSON.stringify(withoutRouting(before.doc)) !== JSON.stringify(withoutRouting(after.doc))) {
    return "rewriting the routing labels would change other settings of the file (labels shared through an anchor or a merge key); edit the file instead";
  }
  return null;
}
