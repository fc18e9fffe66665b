/** What Sundeck checked is what PyYAML and docker compose read in the file it renders, fixtures and fuzz alike. */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: compose interpolation syntax is part of the fuzz alphabet
/**
 * Differential tests: what Sundeck checked against what the real readers make of the file it renders.
 *
 * Sundeck reads a compose file as YAML 1.2, interpolates and checks it, and renders the file compose runs. Compose v1
 * (docker-compose 1.29) reads that file as YAML 1.1 through PyYAML, compose v2 through go-yaml. Any place where the
 * readers disagree lets a file say one thing to the checks and another to compose (a U+2028 written raw in a plain
 * scalar is a line break to YAML 1.1, so `image: "nginx\u2028    privileged: true"` deployed a privileged container).
 *
 * 1. ok fixtures: PyYAML's reading of the rendered file == our YAML 1.2 reading == the checked document with the
 *    documented changes (computed here, independently of renderCompose).
 * 2. ok fixtures: `docker-compose config` (and `docker compose config` when installed) on the rendered file agrees
 *    with the checked document on the security-relevant facts of every service and the top-level volumes/networks.
 * 3. files compose reads itself (`extends.file`, `include` under `<fixture>.files/`): PyYAML == loadYaml.
 * 4. renderer fuzz: hostile strings as values; refused only (and always) for characters the readers disagree on,
 *    otherwise PyYAML's reading of the rendered file == ours == what was meant. SUNDECK_FUZZ_SEED, SUNDECK_FUZZ_CASES
 *    and SUNDECK_FUZZ_KEY_CASES change the run.
 * 5. the same with hostile mapping keys (environment and labels).
 */
import { beforeAll, describe, expect, it } from "bun:test";
import { cpSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { parse } from "yaml";
import { castTypes } from "../../../src/compose/cast";
import { parseEnvFile } from "../../../src/compose/envfile";
import { interpolate } from "../../../src/compose/interpolate";
import { parseAppLabels } from "../../../src/compose/labels";
import { ComposeError, type ComposeProject } from "../../../src/compose/model";
import { parseCompose } from "../../../src/compose/parse";
import { renderCompose, renderedPorts } from "../../../src/compose/rewrite";
import { checkSafety } from "../../../src/compose/security";
import { loadYaml } from "../../../src/compose/yaml";
import { composeEngines } from "../../helpers/compose-engines";
import { type PyRead, pythonWithYaml, readWithPyYAML } from "../../helpers/pyyaml";
import { tempDir } from "../../helpers/tmp";
import { type Fixture, fixtureReader, loadFixtures, POLICY } from "./fixtures";

const PUBLIC = "sundeck-public";
const LOOPBACK = "127.0.0.1";
/** Compose project name the `config` runs use (names of non-external volumes and networks derive from it). */
const PROJECT = "sundeck-differential";
const PY = pythonWithYaml();

// ---------------------------------------------------------------------------------------------------------------
// Showing values: every invisible or non-ASCII character escaped, types named

/** A string as a JSON literal with control characters, line separators and other non-ASCII BMP characters as `\uXXXX`. */
function visible(s: string): string {
  return asciiJson(JSON.stringify(s));
}

function asciiJson(json: string): string {
  return json.replace(/[\u007f-\ud7ff\ue000-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * Raw text (a rendered file) line by line, indented, every character other than printable ASCII shown as `⟨U+XXXX⟩`
 * (tabs and CRs too), so what is raw in the file and what is an escape sequence written by the renderer stay apart.
 */
function visibleText(text: string, indent = "    "): string {
  return text
    .split("\n")
    .map(
      (line) =>
        indent + line.replace(/[^\x20-\x7e]/gu, (c) => `⟨U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}⟩`),
    )
    .join("\n");
}

const TAGS = ["!!float", "!!int", "!!timestamp", "!!binary", "!!set", "!!python"];

function tagOf(v: unknown): string | null {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return null;
  const keys = Object.keys(v);
  return keys.length === 1 && TAGS.includes(keys[0]) ? keys[0] : null;
}

function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "list";
  const tag = tagOf(v);
  if (tag) return tag.slice(2);
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float";
  return typeof v === "object" ? "mapping" : typeof v;
}

function show(v: unknown): string {
  if (v === undefined) return "<absent>";
  if (typeof v === "string") return `${visible(v)} (string)`;
  return `${asciiJson(JSON.stringify(v) ?? String(v))} (${typeName(v)})`;
}

function showPath(path: (string | number)[]): string {
  if (path.length === 0) return "<document>";
  return path
    .map((p, i) => (typeof p === "number" ? `[${p}]` : /^[\w-]+$/.test(p) ? `${i ? "." : ""}${p}` : `[${visible(p)}]`))
    .join("");
}

// ---------------------------------------------------------------------------------------------------------------
// Comparing: both sides brought to the tagged form pyyaml-read.py answers in, then a path-by-path diff

/** Our (JS) value in pyyaml-read.py's tagged form: non-finite and non-safe numbers tagged, `!!`-keys escaped. */
function canon(v: unknown): unknown {
  if (typeof v === "number") {
    if (Number.isNaN(v)) return { "!!float": "nan" };
    if (!Number.isFinite(v)) return { "!!float": v > 0 ? "inf" : "-inf" };
    if (Number.isInteger(v) && !Number.isSafeInteger(v)) return { "!!int": BigInt(v).toString() };
    return v;
  }
  if (typeof v === "bigint") return Number.isSafeInteger(Number(v)) ? Number(v) : { "!!int": v.toString() };
  if (v instanceof Date) return { "!!timestamp": v.toISOString() };
  if (v instanceof Uint8Array) return { "!!binary": Buffer.from(v).toString("base64") };
  if (Array.isArray(v)) return v.map(canon);
  if (v instanceof Map) return { "!!python": `Map(${v.size})` };
  if (typeof v === "object" && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k.startsWith("!!") ? `!!str ${k}` : k] = canon(x);
    return out;
  }
  return v;
}

interface Difference {
  path: (string | number)[];
  read: unknown;
  meant: unknown;
}

/** Every leaf where `read` differs from `meant` (types included: "1" is not 1, "true" is not true). */
function differences(read: unknown, meant: unknown, path: (string | number)[] = [], out: Difference[] = []): Difference[] {
  if (out.length >= 50) return out;
  const isMap = (x: unknown) => typeof x === "object" && x !== null && !Array.isArray(x) && !tagOf(x);
  if (Array.isArray(read) && Array.isArray(meant)) {
    for (let i = 0; i < Math.max(read.length, meant.length); i++) differences(read[i], meant[i], [...path, i], out);
  } else if (isMap(read) && isMap(meant)) {
    const r = read as Record<string, unknown>;
    const m = meant as Record<string, unknown>;
    for (const k of new Set([...Object.keys(m), ...Object.keys(r)])) {
      differences(Object.hasOwn(r, k) ? r[k] : undefined, Object.hasOwn(m, k) ? m[k] : undefined, [...path, k], out);
    }
  } else if (JSON.stringify(read) !== JSON.stringify(meant) || typeof read !== typeof meant) {
    out.push({ path, read, meant });
  }
  return out;
}

function describeDifferences(diffs: Difference[], reader: string, indent = "  "): string {
  return diffs.map((d) => `${indent}${showPath(d.path)}: ${reader} ${show(d.read)}; we meant ${show(d.meant)}`).join("\n");
}

/** What went wrong between PyYAML's reading, our reading and the data we meant, or "" when all three agree. */
function readingReport(py: PyRead, ours: { ok: unknown } | { error: string }, meant: unknown): string {
  const lines: string[] = [];
  const m = canon(meant);
  if ("error" in ours) lines.push(`  Sundeck's YAML 1.2 reader (loadYaml) refused the rendered file: ${ours.error}`);
  else {
    const d = differences(canon(ours.ok), m);
    if (d.length)
      lines.push(
        "  our YAML 1.2 reading (loadYaml) is not the data we meant to write:",
        describeDifferences(d, "loadYaml read", "    "),
      );
  }
  if ("error" in py) lines.push(`  PyYAML (compose v1) cannot read the rendered file: ${py.error.split("\n").join(" | ")}`);
  else {
    const d = differences(py.ok, m);
    if (d.length) {
      lines.push(
        `  PyYAML (YAML 1.1, as compose v1 reads it${py.retry ? ", on its text re-read" : ""}) reads something else:`,
        describeDifferences(d, "PyYAML read", "    "),
      );
    } else if (py.retry) lines.push("  PyYAML only read the rendered file on compose v1's second (text) attempt");
  }
  return lines.join("\n");
}

function ourReading(text: string): { ok: unknown } | { error: string } {
  try {
    return { ok: loadYaml(text) };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// What the rendered file should say, computed from the checked document by the documented rules (README, Rewrite)

const isRecord = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Every string value's `$` doubled so compose does not interpolate again; mapping keys are not interpolated by
 * compose and stay as written. */
function doubleDollars(v: unknown): unknown {
  if (typeof v === "string") return v.replaceAll("$", "$$$$");
  if (Array.isArray(v)) return v.map(doubleDollars);
  if (isRecord(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, doubleDollars(x)]));
  return v;
}

/**
 * The data the rendered file must hold: the checked document without `name`, `version` and top-level `x-*`; ports
 * as short syntax bound to loopback unless an interface is given (renderedPorts); routed services also on the public
 * network (added to a list or mapping of networks, else `[default, public]`), which is declared external; every `$`
 * of a string value escaped as `$$`.
 */
function expectedRendered(project: ComposeProject, routed: string[]): Record<string, any> {
  const doc = structuredClone(project.doc);
  delete doc.name;
  delete doc.version;
  for (const k of Object.keys(doc)) if (k.startsWith("x-")) delete doc[k];
  for (const [name, svc] of Object.entries<Record<string, any>>(doc.services)) {
    if (svc.ports !== undefined && svc.ports !== null) svc.ports = renderedPorts(svc, name);
    if (!routed.includes(name)) continue;
    if (Array.isArray(svc.networks)) {
      if (!svc.networks.includes(PUBLIC)) svc.networks.push(PUBLIC);
    } else if (isRecord(svc.networks) && Object.keys(svc.networks).length) {
      if (!Object.hasOwn(svc.networks, PUBLIC)) svc.networks[PUBLIC] = {};
    } else svc.networks = ["default", PUBLIC];
  }
  if (routed.length) doc.networks = { ...(isRecord(doc.networks) ? doc.networks : {}), [PUBLIC]: { external: true } };
  return doubleDollars(doc) as Record<string, any>;
}

// ---------------------------------------------------------------------------------------------------------------
// ok fixtures, prepared like prepare() does

interface Prepared {
  f: Fixture;
  project: ComposeProject;
  routed: string[];
  rendered: string;
}

function prepareFixture(f: Fixture): Prepared {
  const project = parseCompose(f.text, f.env);
  checkSafety(project, f.policy, fixtureReader(f));
  const routed = [...new Set(parseAppLabels(project).endpoints.map((e) => e.service))];
  return { f, project, routed, rendered: renderCompose(project, { routed, publicNetwork: PUBLIC }) };
}

const fixtures = loadFixtures("ok");

describe.skipIf(!PY)("ok fixtures: the rendered file read by PyYAML is what Sundeck checked", () => {
  const prepared = new Map<string, Prepared | Error>();
  const reads = new Map<string, PyRead>();

  beforeAll(async () => {
    for (const f of fixtures) {
      try {
        prepared.set(f.name, prepareFixture(f));
      } catch (e) {
        prepared.set(f.name, e as Error);
      }
    }
    const ok = [...prepared.values()].filter((p): p is Prepared => !(p instanceof Error));
    const answers = await readWithPyYAML(ok.map((p) => p.rendered));
    for (const [i, p] of ok.entries()) reads.set(p.f.name, answers[i]);
  }, 60_000);

  it.each(fixtures.map((f) => [f.name]))("%s", (name) => {
    const p = prepared.get(name)!;
    if (p instanceof Error) throw new Error(`Sundeck refused an ok fixture: ${p.message}`);
    const meant = expectedRendered(p.project, p.routed);
    const report = readingReport(reads.get(name)!, ourReading(p.rendered), meant);
    if (report)
      throw new Error(
        `fixture ${name}: the rendered file does not say what was checked\n${report}\n  rendered file:\n${visibleText(p.rendered)}`,
      );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Files compose reads itself: extends.file and include targets, unrendered

function yamlFilesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...yamlFilesUnder(p));
    else if (/\.ya?ml$/.test(name)) out.push(p);
  }
  return out.sort();
}

const siblings = fixtures.flatMap((f) =>
  f.filesDir
    ? yamlFilesUnder(f.filesDir).map((p) => ({
        name: `${f.name}.files/${relative(f.filesDir!, p)}`,
        text: readFileSync(p, "utf8"),
      }))
    : [],
);

describe.skipIf(!PY || siblings.length === 0)(
  "files compose reads itself (extends, include): PyYAML reads what loadYaml read",
  () => {
    let reads: PyRead[] = [];
    beforeAll(async () => {
      reads = await readWithPyYAML(siblings.map((s) => s.text));
    }, 60_000);

    it.each(siblings.map((s, i) => [s.name, i]))("%s", (name, i) => {
      const s = siblings[i];
      const ours = ourReading(s.text);
      if ("error" in ours) throw new Error(`${name}: loadYaml refused it: ${ours.error}`);
      const report = readingReport(reads[i], ours, ours.ok);
      if (report)
        throw new Error(
          `${name}: compose v1 reads this file differently from Sundeck\n${report}\n  file:\n${visibleText(s.text)}`,
        );
    });
  },
);

// ---------------------------------------------------------------------------------------------------------------
// docker-compose config: the security-relevant facts compose ends up with, against the ones Sundeck checked

const engines = composeEngines;

it("finds docker-compose v1 and PyYAML on this machine", () => {
  if (process.env.CI) {
    expect(PY).not.toBeNull();
    expect(engines.length).toBeGreaterThan(0);
  }
});

/** Run `fn` over `items` with at most `size` at a time. */
async function pool<T, R>(items: T[], size: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker));
  return out;
}

async function composeConfig(cmd: string[], dir: string): Promise<{ code: number; out: string; err: string }> {
  // a clean environment: the rendered file must not depend on the caller's variables
  const proc = Bun.spawn([...cmd, "-p", PROJECT, "-f", join(dir, "rendered.yml"), "config"], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", DOCKER_HOST: process.env.DOCKER_HOST ?? "" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, out, err };
}

/** Compose prints every `$` of its output as `$$` (keys too, in v1); undone on every string. */
function undoDollars(v: unknown): unknown {
  if (typeof v === "string") return v.replaceAll("$$", "$");
  if (Array.isArray(v)) return v.map(undoDollars);
  if (isRecord(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.replaceAll("$$", "$"), undoDollars(x)]));
  return v;
}

const str = (v: unknown): string | null => (v === undefined || v === null ? null : typeof v === "string" ? v : JSON.stringify(v));
const isHostPath = (s: string) => /^[./~]/.test(s);

/** `80`, `80-81` → [start, end]. */
function portRange(s: string): [number, number] | null {
  const m = /^(\d+)(?:-(\d+))?$/.exec(s);
  return m ? [Number(m[1]), Number(m[2] ?? m[1])] : null;
}

/**
 * Ports as `ip|published|target/protocol`, one per container port: short and long syntax read alike, brackets off
 * IPv6 addresses, protocol lowercased (tcp when absent), equal-size ranges expanded (compose v1 expands them). An entry
 * with no interface gets `defaultIp` (Sundeck's side: loopback, as documented; compose's side: none, so a port
 * published on every interface shows).
 */
function portFacts(raw: unknown, defaultIp: string): string[] {
  let ip = "";
  let published = "";
  let target = "";
  let protocol = "tcp";
  if (typeof raw === "number") target = String(raw);
  else if (typeof raw === "string") {
    let text = raw.trim();
    const slash = text.lastIndexOf("/");
    if (slash >= 0) {
      protocol = text.slice(slash + 1);
      text = text.slice(0, slash);
    }
    const parts = text.split(":");
    target = parts[parts.length - 1];
    published = parts.length >= 2 ? parts[parts.length - 2] : "";
    ip = parts.slice(0, -2).join(":");
  } else if (isRecord(raw)) {
    ip = str(raw.host_ip) ?? "";
    published = str(raw.published) ?? "";
    target = str(raw.target) ?? "";
    protocol = str(raw.protocol) ?? "tcp";
  } else return [`<unreadable port ${JSON.stringify(raw)}>`];
  ip = ip.replace(/^\[(.*)\]$/, "$1") || defaultIp;
  protocol = protocol.toLowerCase();
  const fact = (p: string, t: string | number) => `${ip}|${p}|${t}/${protocol}`;
  const t = portRange(target);
  const p = portRange(published);
  if (t && t[1] > t[0]) {
    const n = t[1] - t[0];
    if (published === "") return Array.from({ length: n + 1 }, (_, i) => fact("", t[0] + i));
    if (p && p[1] - p[0] === n) return Array.from({ length: n + 1 }, (_, i) => fact(String(p[0] + i), t[0] + i));
  }
  return [fact(published, target)];
}

/**
 * A mount as `[target, "type source -> target (ro|rw)"]`: short and long syntax read alike, bind sources resolved
 * against `baseDir` (the directory relative paths are resolved in), anonymous volumes as type volume with no source.
 */
function mountFact(raw: unknown, baseDir: string): [string, string] {
  let type: string;
  let source: string;
  let target: string;
  let readOnly: boolean;
  if (isRecord(raw)) {
    source = str(raw.source) ?? "";
    target = str(raw.target) ?? "";
    type = str(raw.type) ?? (source && isHostPath(source) ? "bind" : "volume");
    readOnly = raw.read_only === true;
  } else {
    const parts = (str(raw) ?? "").split(":");
    if (parts.length === 1) [type, source, target, readOnly] = ["volume", "", parts[0], false];
    else {
      [source, target] = parts;
      type = isHostPath(source) ? "bind" : "volume";
      readOnly = parts.slice(2).join(":").split(",").includes("ro");
    }
  }
  if (type === "bind" && !source.startsWith("~")) source = resolve(baseDir, source);
  // docker-compose v1 writes container paths without a trailing slash; the container sees the same directory
  if (target.length > 1) target = target.replace(/\/+$/, "");
  return [target, `${type} ${visible(source)} -> ${target} (${readOnly ? "ro" : "rw"})`];
}

/** A device as `[target, "source:target:permissions"]`, permissions rwm when absent. */
function deviceFact(raw: unknown): [string, string] {
  let [source, target, permissions] = isRecord(raw)
    ? [str(raw.source) ?? "", str(raw.target) ?? "", str(raw.permissions) ?? ""]
    : (str(raw) ?? "").split(":");
  target ||= source;
  permissions ||= "rwm";
  return [target, `${source}:${target}:${permissions}`];
}

/** `KEY=VALUE` lists and mappings alike; values as strings, a key without value as `<unset>`. */
function keyValueFacts(raw: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (Array.isArray(raw)) {
    for (const item of raw) {
      const s = str(item) ?? "";
      const eq = s.indexOf("=");
      if (eq < 0) out[s] = "<unset>";
      else out[s.slice(0, eq)] = s.slice(eq + 1);
    }
  } else if (isRecord(raw)) {
    for (const [k, v] of Object.entries(raw)) out[k] = v === null ? "<unset>" : typeof v === "string" ? v : JSON.stringify(v);
  }
  return out;
}

/** Shell words as compose v2 (go-shellwords) splits a string `command`/`entrypoint`. */
function shellWords(s: string): string[] {
  const words: string[] = [];
  let cur = "";
  let has = false;
  let quote: string | null = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"' && i + 1 < s.length) cur += s[++i];
      else cur += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      has = true;
    } else if (c === "\\" && i + 1 < s.length) {
      cur += s[++i];
      has = true;
    } else if (/\s/.test(c)) {
      if (has || cur) words.push(cur);
      cur = "";
      has = false;
    } else cur += c;
  }
  if (has || cur) words.push(cur);
  return words;
}

/** The facts of one service that decide what it can reach on the host. Absent keys are left out (see finish()). */
type ServiceFacts = Record<string, unknown>;

const SCALARS = ["image", "privileged", "user", "network_mode", "pid", "ipc", "userns_mode"] as const;
const SETS = ["cap_add", "cap_drop", "security_opt"] as const;

interface FactOptions {
  /** Directory relative bind sources (and env_file paths) resolve in. */
  baseDir: string;
  /** Interface for ports that name none ("" on compose's side). */
  defaultIp: string;
  /** Compose v2 splits string commands into words. */
  v2: boolean;
  /** Sundeck's side: read env_file contents into environment, as compose does (compose's output has them merged). */
  readEnvFiles: boolean;
}

function serviceFacts(svc: Record<string, any>, o: FactOptions): ServiceFacts {
  const f: ServiceFacts = {};
  for (const k of SCALARS) {
    if (svc[k] === undefined || svc[k] === null) continue;
    f[k] = k === "privileged" ? svc[k] : str(svc[k]);
  }
  for (const k of SETS) if (Array.isArray(svc[k])) f[k] = svc[k].map((x: unknown) => str(x));
  if (Array.isArray(svc.devices)) f.devices = Object.fromEntries(svc.devices.map(deviceFact));
  if (Array.isArray(svc.volumes)) f.volumes = Object.fromEntries(svc.volumes.map((v: unknown) => mountFact(v, o.baseDir)));
  if (Array.isArray(svc.ports)) f.ports = svc.ports.flatMap((p: unknown) => portFacts(p, o.defaultIp));
  let env: Record<string, string> = {};
  if (o.readEnvFiles && svc.env_file !== undefined && svc.env_file !== null) {
    for (const entry of Array.isArray(svc.env_file) ? svc.env_file : [svc.env_file]) {
      const p = resolve(o.baseDir, str(isRecord(entry) ? entry.path : entry) ?? "");
      if (existsSync(p)) env = { ...env, ...parseEnvFile(readFileSync(p, "utf8")) };
    }
  }
  if (svc.environment !== undefined || Object.keys(env).length) f.environment = { ...env, ...keyValueFacts(svc.environment) };
  if (svc.labels !== undefined) f.labels = keyValueFacts(svc.labels);
  for (const k of ["command", "entrypoint"]) {
    const v = svc[k];
    if (v === undefined || v === null) continue;
    f[k] = Array.isArray(v) ? v.map((x) => str(x)) : o.v2 && typeof v === "string" ? shellWords(v) : str(v);
  }
  if (svc.networks !== undefined && svc.networks !== null) {
    f.networks = Array.isArray(svc.networks) ? svc.networks.map((x: unknown) => str(x)) : Object.keys(svc.networks);
  }
  return f;
}

/** Compose's extends merge, on facts: scalars and commands overridden, sets unioned, mounts and devices by target,
 * environment and labels by key, ports and networks concatenated. */
function mergeFacts(base: ServiceFacts, local: ServiceFacts): ServiceFacts {
  const out: ServiceFacts = { ...base };
  for (const [k, v] of Object.entries(local)) {
    const b = base[k];
    if (b === undefined) out[k] = v;
    else if (["cap_add", "cap_drop", "security_opt", "ports", "networks"].includes(k))
      out[k] = [...(b as unknown[]), ...(v as unknown[])];
    else if (["devices", "volumes", "environment", "labels"].includes(k)) out[k] = { ...(b as object), ...(v as object) };
    else out[k] = v;
  }
  return out;
}

/** Membership of a set, as a mapping so a difference names the item: `{ SYS_ADMIN: "present" }`. */
const asSet = (items: string[]): Record<string, string> => Object.fromEntries(items.map((x) => [x, "present"]));

/** Sets (capabilities, options, ports, networks) as memberships, mounts and devices keyed by target, absent fields
 * with their defaults, a service without networks or network_mode on `default`. */
function finish(f: ServiceFacts): ServiceFacts {
  const out: ServiceFacts = {};
  for (const k of SCALARS) out[k] = f[k] ?? null;
  for (const k of [...SETS, "ports"]) out[k] = asSet((f[k] as string[]) ?? []);
  for (const k of ["devices", "volumes"]) out[k] = f[k] ?? {};
  out.environment = f.environment ?? {};
  out.labels = f.labels ?? {};
  out.command = f.command ?? null;
  out.entrypoint = f.entrypoint ?? null;
  out.networks = asSet((f.networks as string[]) ?? (f.network_mode ? [] : ["default"]));
  return out;
}

type TopFacts = Record<string, { driver: string | null; driver_opts: Record<string, string>; external: boolean; name: string }>;

/** Top-level volumes or networks: driver, options, external, and the docker name (given, else the key for external
 * ones, else `<project>_<key>`). An undeclared-looking `default` network (compose v2 prints it) is left out. */
function topFacts(section: unknown): TopFacts {
  const out: TopFacts = {};
  if (!isRecord(section)) return out;
  for (const [key, raw] of Object.entries(section)) {
    const v = isRecord(raw) ? raw : {};
    const external = v.external === true || isRecord(v.external);
    const name = str(v.name) ?? (isRecord(v.external) ? str(v.external.name) : null) ?? (external ? key : `${PROJECT}_${key}`);
    const opts = isRecord(v.driver_opts) ? keyValueFacts(v.driver_opts) : {};
    out[key] = { driver: str(v.driver), driver_opts: opts, external, name };
  }
  const d = out.default;
  if (d && !d.driver && !d.external && !Object.keys(d.driver_opts).length && d.name === `${PROJECT}_default`) delete out.default;
  return out;
}

interface ProjectFacts {
  services: Record<string, ServiceFacts>;
  volumes: TopFacts;
  networks: TopFacts;
}

/** Read an extends/include file the way Sundeck's checks did: loadYaml, interpolated with no variables, cast. */
function readChecked(abs: string): Record<string, any> {
  const doc = interpolate(loadYaml(readFileSync(abs, "utf8")) as Record<string, any>, {});
  castTypes(doc);
  return doc;
}

/**
 * What Sundeck checked, as facts: the checked document's services (with `extends` merged from the checked base
 * service, its paths resolved in its own file's directory, and `include`d files' services added), ports bound as
 * rendered (loopback unless an interface is given), routed services also on the public network (external).
 */
function sundeckFacts(p: Prepared, dir: string, v2: boolean): ProjectFacts {
  const o = (baseDir: string): FactOptions => ({ baseDir, defaultIp: LOOPBACK, v2, readEnvFiles: true });
  const facts = (services: Record<string, any>, name: string, baseDir: string, depth = 0): ServiceFacts => {
    const svc = services[name];
    const own = serviceFacts(svc, o(baseDir));
    if (svc.extends === undefined || depth > 5) return own;
    const ext = typeof svc.extends === "string" ? { service: svc.extends } : svc.extends;
    if (!ext.file) return mergeFacts(facts(services, ext.service, baseDir, depth + 1), own);
    const abs = resolve(baseDir, ext.file);
    return mergeFacts(facts(readChecked(abs).services, ext.service, dirname(abs), depth + 1), own);
  };
  const doc = p.project.doc;
  const services: Record<string, ServiceFacts> = {};
  for (const name of Object.keys(doc.services)) services[name] = facts(doc.services, name, dir);
  const volumes = topFacts(doc.volumes);
  const networks = topFacts(doc.networks);
  for (const inc of Array.isArray(doc.include) ? doc.include : []) {
    const rel = typeof inc === "string" ? inc : isRecord(inc) ? (Array.isArray(inc.path) ? inc.path[0] : inc.path) : null;
    if (typeof rel !== "string") continue;
    const abs = resolve(dir, rel);
    const included = readChecked(abs);
    for (const name of Object.keys(included.services)) services[name] = facts(included.services, name, dirname(abs));
    Object.assign(volumes, topFacts(included.volumes));
    Object.assign(networks, topFacts(included.networks));
  }
  for (const name of p.routed) {
    const nets = (services[name].networks as string[] | undefined) ?? ["default"];
    services[name].networks = [...nets, PUBLIC];
  }
  if (p.routed.length) networks[PUBLIC] = { driver: null, driver_opts: {}, external: true, name: PUBLIC };
  for (const [name, f] of Object.entries(services)) services[name] = finish(f);
  return { services, volumes, networks };
}

/** What compose ended up with, as facts: its `config` output with `$$` undone. */
function composeFacts(config: Record<string, any>, dir: string, v2: boolean): ProjectFacts {
  const doc = undoDollars(config) as Record<string, any>;
  const services: Record<string, ServiceFacts> = {};
  const o: FactOptions = { baseDir: dir, defaultIp: "", v2, readEnvFiles: false };
  for (const [name, svc] of Object.entries<Record<string, any>>(doc.services ?? {}))
    services[name] = finish(serviceFacts(svc, o));
  return { services, volumes: topFacts(doc.volumes), networks: topFacts(doc.networks) };
}

/** Render a fixture into its own temp project directory, with its sibling files. */
function writeFixture(p: Prepared): string {
  const dir = tempDir("sundeck-differential-");
  if (p.f.filesDir) cpSync(p.f.filesDir, dir, { recursive: true });
  writeFileSync(join(dir, "rendered.yml"), p.rendered);
  return dir;
}

for (const engine of engines) {
  describe.skipIf(!PY)(`${engine.name} config on the rendered file agrees with what Sundeck checked`, () => {
    const usable = fixtures.filter((f) => engine.v2 || !f.v2Only);
    const results = new Map<string, { p: Prepared; dir: string; code: number; out: string; err: string; config?: PyRead }>();

    beforeAll(async () => {
      const jobs = usable.flatMap((f) => {
        try {
          const p = prepareFixture(f);
          return [{ p, dir: writeFixture(p) }];
        } catch {
          return []; // reported by the PyYAML tests above
        }
      });
      const runs = await pool(jobs, 6, (j) => composeConfig(engine.cmd, j.dir));
      for (const [i, j] of jobs.entries()) results.set(j.p.f.name, { ...j, ...runs[i] });
      // compose v1 prints YAML 1.1 (PyYAML's dumper): read it back with PyYAML; v2's output is read as YAML 1.2
      if (!engine.v2) {
        const ok = [...results.values()].filter((r) => r.code === 0);
        const reads = await readWithPyYAML(ok.map((r) => r.out));
        for (const [i, r] of ok.entries()) r.config = reads[i];
      }
    }, 120_000);

    it.each(usable.map((f) => [f.name]))("%s", (name) => {
      const r = results.get(name);
      if (!r) throw new Error("Sundeck refused the fixture (see the PyYAML tests)");
      if (r.code !== 0) throw new Error(`${engine.name} refused the rendered file: ${r.err}\n${visibleText(r.p.rendered)}`);
      let config: Record<string, any>;
      if (engine.v2) config = parse(r.out);
      else if (r.config && "ok" in r.config) config = r.config.ok as Record<string, any>;
      else
        throw new Error(
          `cannot read ${engine.name}'s output: ${r.config && "error" in r.config ? r.config.error : "?"}\n${r.out}`,
        );
      const theirs = composeFacts(config, r.dir, engine.v2);
      const ours = sundeckFacts(r.p, r.dir, engine.v2);
      const d = differences(canon(theirs), canon(ours));
      if (d.length) {
        throw new Error(
          `fixture ${name}: ${engine.name} ends up with other security-relevant facts than Sundeck checked\n` +
            `${describeDifferences(d, `${engine.name} has`)}\n  rendered file:\n${visibleText(r.p.rendered)}\n  ${engine.name} config:\n${visibleText(r.out)}`,
        );
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Renderer fuzz

/** mulberry32: small, seedable, deterministic. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEED = Number(process.env.SUNDECK_FUZZ_SEED ?? 20240229) >>> 0;
const CASES = Number(process.env.SUNDECK_FUZZ_CASES ?? 2000);
const KEY_CASES = Number(process.env.SUNDECK_FUZZ_KEY_CASES ?? Math.max(300, Math.round(CASES / 5)));

/** The hostile alphabet: fragments a string is built from, with how often each pool is drawn. */
const POOLS: [weight: number, fragments: string[]][] = [
  // YAML indicators
  [
    4,
    [
      ": ",
      " #",
      "#",
      "- ",
      "-",
      "? ",
      "?",
      ":",
      "*",
      "*a",
      "&",
      "&a",
      "!",
      "!!str ",
      "!tag ",
      "%",
      "%YAML 1.1",
      "@",
      "`",
      "|",
      "|-",
      ">",
      ">+",
      "'",
      '"',
      "''",
      "{",
      "}",
      "[",
      "]",
      ",",
      "--- ",
      "...",
      "<<: ",
    ],
  ],
  // words YAML 1.1 (or 1.2) resolves to something other than a string
  [
    4,
    [
      "yes",
      "Yes",
      "YES",
      "no",
      "No",
      "NO",
      "on",
      "On",
      "ON",
      "off",
      "Off",
      "OFF",
      "y",
      "Y",
      "n",
      "N",
      "true",
      "True",
      "TRUE",
      "false",
      "False",
      "null",
      "Null",
      "NULL",
      "~",
      "",
      ".inf",
      "-.Inf",
      "+.INF",
      ".nan",
      ".NaN",
      "0x1F",
      "0o17",
      "017",
      "0b101",
      "1_000",
      "1:20",
      "190:20:30",
      "-1:30",
      "1e3",
      "1E3",
      "6.8523015e+5",
      "1.5",
      "+12",
      "-0",
      "0",
      "08",
      "2001-12-14",
      "2001-12-14t21:59:43.10-05:00",
      "2001-12-14 21:59:43.10 -5",
      "=",
      "<<",
    ],
  ],
  [2, ["\t", " ", "  ", "\n", "\r", "\r\n", "\n\n", " \n ", "\t\n"]],
  [1, ["\\", "\\n", "\\t", "\\u2028", "\\x41", "\\\\", '\\"']],
  [1, ["$", "$$", "${X}", "$X", "${X:-y}", "$1", "$$$"]],
  [2, ["é", "ß", "Ж", "中文", "ｆｕｌｌ", "😀", "🐳", "\u00a0", "\u200b", "\u3000", "ا", "\u00ad"]],
  [3, ["nginx", "alpine", "web", "a", "x1", "FOO", "1.25", "latest", "/bin/sh", "http://x", "a=b"]],
  // characters the readers disagree on: must be refused
  [0.15, ["\u0085", "\u2028", "\u2029", "\ufeff"]],
  [0.15, ["\u0000", "\u0001", "\u0007", "\u0008", "\u000b", "\u000c", "\u001b", "\u001f", "\u007f", "\u0080", "\u009f"]],
];
const WORDS_11 = POOLS[1][1];
const TOTAL_WEIGHT = POOLS.reduce((s, [w]) => s + w, 0);

/** Refused wherever they appear (value or key): C0 controls but tab/LF/CR, DEL, C1 (NEL), LS, PS, BOM. */
const MUST_REFUSE = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff]/;
/** In mapping keys, line breaks and tabs may be refused too (a key is no place for them). */
const KEY_MAY_REFUSE = /[\t\n\r]/;

function hostileString(rand: () => number): string {
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
  if (rand() < 0.3) return pick(WORDS_11);
  const fragment = () => {
    let r = rand() * TOTAL_WEIGHT;
    for (const [w, xs] of POOLS) if ((r -= w) < 0) return pick(xs);
    return pick(POOLS[0][1]);
  };
  let s = "";
  // mostly short; some long enough for a serialiser to fold them over several lines
  for (let n = rand() < 0.2 ? 8 + Math.floor(rand() * 16) : 1 + Math.floor(rand() * 4); n > 0; n--) s += fragment();
  if (rand() < 0.1) s = ` ${s}`;
  if (rand() < 0.1) s = `${s} `;
  return s;
}

/** A document's source text: JSON (valid YAML 1.2) with every `$` of a value doubled and every non-ASCII BMP
 * character escaped, so the input itself is read exactly as meant; the renderer is what is under test. */
function sourceText(checked: unknown): string {
  return JSON.stringify(doubleDollars(checked), null, 1).replace(
    /[\u007f-\ud7ff\ue000-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

interface FuzzCase {
  id: number;
  /** What the checked (interpolated) document should be. */
  checked: Record<string, any>;
  text: string;
  mustRefuse: boolean;
  mayRefuse: boolean;
}

/** Every string of a document: mapping keys (when `keys`) and values. */
function allStrings(v: unknown, keys: boolean): string[] {
  if (typeof v === "string") return [v];
  if (Array.isArray(v)) return v.flatMap((x) => allStrings(x, keys));
  if (isRecord(v)) return Object.entries(v).flatMap(([k, x]) => [...(keys ? [k] : []), ...allStrings(x, keys)]);
  return [];
}

/** Every mapping key of a document. */
function allKeys(v: unknown): string[] {
  if (Array.isArray(v)) return v.flatMap(allKeys);
  if (isRecord(v)) return Object.entries(v).flatMap(([k, x]) => [k, ...allKeys(x)]);
  return [];
}

function fuzzCase(id: number, checked: Record<string, any>): FuzzCase {
  const text = sourceText(checked);
  if (JSON.stringify(parse(text)) !== JSON.stringify(doubleDollars(checked))) {
    throw new Error(`fuzz generator bug: case ${id} reads back differently`);
  }
  const mustRefuse = allStrings(checked, true).some((s) => MUST_REFUSE.test(s));
  return { id, checked, text, mustRefuse, mayRefuse: mustRefuse || allKeys(checked).some((k) => KEY_MAY_REFUSE.test(k)) };
}

/**
 * Strings every run tries first, whatever the seed: the reported exploit, and one of each kind of misreading found so
 * far (a raw tab in a plain scalar, a block scalar losing a leading space, a folded double-quoted string with a line
 * holding one space, NEL/LS/PS, YAML 1.1 words and merge keys).
 */
const KNOWN: string[] = [
  "nginx:alpine\u2028    privileged: true",
  "nginx:alpine\n    privileged: true",
  `a\n\n \n ${"b".repeat(30)}`,
  `${"x".repeat(30)}\n \n y`,
  "1\tx",
  " \n",
  "\u0085",
  "\u2029",
  "yes",
  "<<",
  "=",
  "0o17",
  "1:20",
  "2001-12-14",
  "~",
  "- a: b",
  "*a",
  "${X}",
];

function valueCases(seed: number, n: number): FuzzCase[] {
  const rand = prng(seed);
  const list = (max: number) => Array.from({ length: 1 + Math.floor(rand() * max) }, () => hostileString(rand));
  const known = KNOWN.map((s, id) =>
    fuzzCase(id, { services: { web: { image: s, environment: { K0: s }, labels: [s, `k=${s}`], command: [s] } } }),
  );
  return [
    ...known,
    ...Array.from({ length: Math.max(0, n - known.length) }, (_, i) => {
      const environment = Object.fromEntries(list(4).map((s, j) => [`K${j}`, s]));
      const web = { image: hostileString(rand), environment, labels: list(4), command: list(4) };
      return fuzzCase(known.length + i, { services: { web } });
    }),
  ];
}

function keyCases(seed: number, n: number): FuzzCase[] {
  const rand = prng(seed);
  const mapping = () => {
    const m: Record<string, string> = {};
    for (let i = 1 + Math.floor(rand() * 4); i > 0; i--) {
      const k = hostileString(rand);
      if (k !== "__proto__") m[k] = rand() < 0.5 ? "v" : hostileString(rand);
    }
    return m;
  };
  return Array.from({ length: n }, (_, id) =>
    fuzzCase(id, { services: { web: { image: "nginx", environment: mapping(), labels: mapping() } } }),
  );
}

type Outcome =
  | { kind: "refused"; error: ComposeError }
  | { kind: "crash"; error: unknown }
  | { kind: "rendered"; project: ComposeProject; rendered: string };

function runPipeline(text: string): Outcome {
  try {
    const project = parseCompose(text, {});
    checkSafety(project, POLICY, () => null);
    return { kind: "rendered", project, rendered: renderCompose(project, { routed: [], publicNetwork: PUBLIC }) };
  } catch (e) {
    return e instanceof ComposeError ? { kind: "refused", error: e } : { kind: "crash", error: e };
  }
}

/** Where the first forbidden character of a case sits, for messages. */
function forbiddenAt(c: FuzzCase): string {
  const s = allStrings(c.checked, true).find((x) => MUST_REFUSE.test(x));
  return s ? `${visible(MUST_REFUSE.exec(s)![0])} in ${visible(s)}` : "none";
}

interface Misread {
  c: FuzzCase;
  rendered: string;
  report: string;
  py: PyRead;
  meant: unknown;
}

/** One string of a fuzz document and where it sits: `image`, `environment value`, `labels key`, `command item`... */
interface Leaf {
  field: string;
  s: string;
}

function leavesOf(c: FuzzCase): Leaf[] {
  const web = c.checked.services.web;
  const out: Leaf[] = [{ field: "image", s: web.image }];
  for (const name of ["environment", "labels", "command"]) {
    const v = web[name];
    if (Array.isArray(v)) for (const s of v) out.push({ field: `${name} item`, s });
    else if (isRecord(v)) {
      for (const [k, x] of Object.entries<string>(v)) out.push({ field: `${name} key`, s: k }, { field: `${name} value`, s: x });
    }
  }
  return out;
}

/** A document holding one string where a failure was seen, everything else plain. */
function singleDoc(leaf: Leaf): Record<string, any> {
  const [name, kind] = leaf.field.split(" ");
  const web: Record<string, any> = { image: "nginx" };
  if (name === "image") web.image = leaf.s;
  else if (kind === "item") web[name] = [leaf.s];
  else if (kind === "key") web[name] = { [leaf.s]: "v" };
  else web[name] = { K: leaf.s };
  return { services: { web } };
}

/** What Sundeck rendered for a checked document and how the readers took it; null when Sundeck refused it. */
interface Checked {
  rendered: string;
  /** readingReport(): "" when PyYAML, loadYaml and the meant data agree. */
  report: string;
  /** signature(): what went wrong, in words that group alike failures. */
  signature: string;
}

/** The changed part of a string (with one character of context), or the change of type. */
function change(read: unknown, meant: unknown): string {
  if (read === undefined) return "a mapping key is read as another key (or lost)";
  if (typeof read !== "string" || typeof meant !== "string") return `${typeName(meant)} read as ${typeName(read)}`;
  let p = 0;
  while (p < read.length && p < meant.length && read[p] === meant[p]) p++;
  let q = 0;
  while (q < read.length - p && q < meant.length - p && read[read.length - 1 - q] === meant[meant.length - 1 - q]) q++;
  const part = (s: string) => s.slice(Math.max(0, p - 1), s.length - q + (q > 0 ? 1 : 0));
  return `${visible(part(meant))} read as ${visible(part(read))}`;
}

function signature(py: PyRead, ours: { ok: unknown } | { error: string }, meant: unknown): string {
  const parts: string[] = [];
  const m = canon(meant);
  if ("error" in ours) parts.push("loadYaml refuses the rendered file");
  else {
    const d = differences(canon(ours.ok), m)[0];
    if (d) parts.push(`loadYaml: ${change(d.read, d.meant)}`);
  }
  if ("error" in py) parts.push(`PyYAML: ${errorGist(py.error)}`);
  else {
    const d = differences(py.ok, m)[0];
    if (d) parts.push(`PyYAML: ${change(d.read, d.meant)}`);
    else if (py.retry) parts.push("PyYAML: read only on compose v1's text re-read");
  }
  return parts.join("; ");
}

/** Render checked documents through Sundeck and read them back (one PyYAML batch). */
async function checkAll(docs: Record<string, any>[]): Promise<(Checked | null)[]> {
  const outcomes = docs.map((d) => runPipeline(sourceText(d)));
  const reads = await readWithPyYAML(outcomes.map((o) => (o.kind === "rendered" ? o.rendered : "")));
  return outcomes.map((o, i) => {
    if (o.kind !== "rendered") return null;
    const ours = ourReading(o.rendered);
    const meant = expectedRendered(o.project, []);
    return { rendered: o.rendered, report: readingReport(reads[i], ours, meant), signature: signature(reads[i], ours, meant) };
  });
}

async function misreads(leaves: Leaf[]): Promise<boolean[]> {
  return (await checkAll(leaves.map(singleDoc))).map((r) => r !== null && r.report !== "");
}

/** Shrink each string to a shorter one that is still misread on its own, deleting chunks of code points; all of them
 * advance together so each round is one PyYAML batch. */
async function shrink(items: Leaf[]): Promise<string[]> {
  const cur = items.map((x) => Array.from(x.s));
  const chunk = cur.map((cs) => Math.max(1, Math.floor(cs.length / 2)));
  for (let round = 0; round < 80; round++) {
    const tries: { i: number; cand: string[] }[] = [];
    cur.forEach((cs, i) => {
      if (chunk[i] === 0 || cs.length === 0) return;
      for (let at = 0; at < cs.length; at += chunk[i]) tries.push({ i, cand: [...cs.slice(0, at), ...cs.slice(at + chunk[i])] });
    });
    if (!tries.length) break;
    const bad = await misreads(tries.map((t) => ({ field: items[t.i].field, s: t.cand.join("") })));
    const advanced = new Set<number>();
    tries.forEach((t, k) => {
      if (!bad[k] || advanced.has(t.i)) return;
      advanced.add(t.i);
      cur[t.i] = t.cand;
      chunk[t.i] = Math.min(chunk[t.i], Math.max(1, Math.floor(t.cand.length / 2)));
    });
    cur.forEach((_, i) => {
      if (!advanced.has(i)) chunk[i] = Math.floor(chunk[i] / 2);
    });
  }
  return cur.map((cs) => cs.join(""));
}

/** PyYAML's error without its positions: "ScannerError: while scanning a simple key; could not find expected ':'". */
function errorGist(e: string): string {
  return e
    .split("\n")
    .filter((l) => !/^\s+in "<file>"/.test(l))
    .join("; ");
}

/**
 * The failure message of a fuzz run. For each failing document: the first of its strings that is misread alone in a
 * document, shrunk to a shortest string still misread; documents grouped by what goes wrong (the changed part of the
 * value, or PyYAML's error), each group with its shortest example rendered and read; then a few documents in full.
 */
async function fuzzReport(title: string, seed: number, total: number, misread: Misread[]): Promise<string> {
  const rerun = `SUNDECK_FUZZ_SEED=${SEED} SUNDECK_FUZZ_CASES=${CASES} SUNDECK_FUZZ_KEY_CASES=${KEY_CASES}`;
  const lines = [
    `${title}: ${misread.length} of ${total} rendered documents are not read as meant (seed ${seed}; re-run with ${rerun})`,
  ];
  const studied = misread.slice(0, 200);
  const leafKey = (l: Leaf) => `${l.field}\u0000${l.s}`;
  const unique = new Map<string, Leaf>();
  for (const m of studied) for (const l of leavesOf(m.c)) unique.set(leafKey(l), l);
  const uniqueLeaves = [...unique.values()];
  const alone = new Map<string, boolean>();
  for (const [i, bad] of (await misreads(uniqueLeaves)).entries()) alone.set(leafKey(uniqueLeaves[i]), bad);
  const culprit = studied.map((m) => leavesOf(m.c).find((l) => alone.get(leafKey(l))) ?? null);
  const culprits = [...new Map(culprit.filter((l) => l !== null).map((l) => [leafKey(l), l])).values()];
  const shrunk = await shrink(culprits);
  const minimal = culprits.map((l, i) => ({ field: l.field, s: shrunk[i] }));
  const checkedMinimal = await checkAll(minimal.map(singleDoc));
  const byLeaf = new Map(culprits.map((l, i) => [leafKey(l), { leaf: minimal[i], checked: checkedMinimal[i]! }]));
  const groups = new Map<
    string,
    { count: number; fields: Set<string>; example: { leaf: Leaf | null; text: string; report: string } }
  >();
  const add = (sig: string, field: string, example: { leaf: Leaf | null; text: string; report: string }) => {
    const g = groups.get(sig) ?? { count: 0, fields: new Set<string>(), example };
    g.count++;
    g.fields.add(field);
    const len = (e: typeof example) => (e.leaf ? e.leaf.s.length : 1e9);
    if (len(example) < len(g.example)) g.example = example;
    groups.set(sig, g);
  };
  for (const [i, m] of studied.entries()) {
    const l = culprit[i];
    const found = l ? byLeaf.get(leafKey(l)) : undefined;
    if (found)
      add(found.checked.signature, l!.field, { leaf: found.leaf, text: found.checked.rendered, report: found.checked.report });
    else
      add(`${signature(m.py, ourReading(m.rendered), m.meant)} (only with the other strings)`, "document", {
        leaf: null,
        text: m.rendered,
        report: m.report,
      });
  }
  lines.push(`${groups.size} kinds of failure among the ${studied.length} documents studied, most frequent first:`);
  for (const [sig, g] of [...groups].sort((a, b) => b[1].count - a[1].count)) {
    const ex = g.example;
    lines.push(`- ${g.count} documents (${[...g.fields].sort().join(", ")}): ${sig}`);
    lines.push(
      ex.leaf ? `    shortest: ${visible(ex.leaf.s)} as ${ex.leaf.field}, rendered:` : "    example document, rendered:",
    );
    lines.push(visibleText(ex.text.trimEnd(), "      "), ex.report.replace(/^/gm, "  "));
  }
  if (misread.length > studied.length) lines.push(`(${misread.length - studied.length} more documents not studied)`);
  lines.push("First failing documents in full (checked document as JSON, then what differs, then the rendered file):");
  for (const m of misread.slice(0, 2)) {
    lines.push(
      `  case ${m.c.id}: ${asciiJson(JSON.stringify(m.c.checked))}`,
      m.report,
      "    rendered file:",
      visibleText(m.rendered, "      "),
    );
  }
  return lines.join("\n");
}

function fuzzSuite(title: string, seed: number, n: number, keyCase: boolean) {
  describe.skipIf(!PY)(`${title} (seed ${seed}, ${n} documents)`, () => {
    const cases = keyCase ? keyCases(seed, n) : valueCases(seed, n);
    const outcomes = cases.map((c) => runPipeline(c.text));
    const reads = new Map<number, PyRead>();

    beforeAll(async () => {
      const rendered = cases.filter((_, i) => outcomes[i].kind === "rendered");
      const answers = await readWithPyYAML(rendered.map((c) => (outcomes[c.id] as { rendered: string }).rendered));
      for (const [i, c] of rendered.entries()) reads.set(c.id, answers[i]);
    }, 120_000);

    it("has documents of both kinds: some to refuse, most to render", () => {
      const refused = cases.filter((c) => c.mustRefuse).length;
      expect(refused).toBeGreaterThan(n * 0.05);
      expect(refused).toBeLessThan(n * 0.6);
    });

    it("refuses exactly the documents holding characters the readers disagree on, with rule `characters`", () => {
      const problems: string[] = [];
      cases.forEach((c, i) => {
        const o = outcomes[i];
        const input = `case ${c.id}: ${asciiJson(JSON.stringify(c.checked))}`;
        if (o.kind === "crash")
          problems.push(`${input}\n    crashed: ${o.error instanceof Error ? o.error.stack : String(o.error)}`);
        else if (o.kind === "refused" && !c.mayRefuse)
          problems.push(`${input}\n    refused a harmless document: ${o.error.rule}: ${o.error.message}`);
        else if (o.kind === "refused" && o.error.rule !== "characters")
          problems.push(`${input}\n    refused with rule ${o.error.rule}, not characters: ${o.error.message}`);
        else if (o.kind === "rendered" && c.mustRefuse)
          problems.push(`${input}\n    accepted although it holds ${forbiddenAt(c)}`);
      });
      if (problems.length) {
        throw new Error(
          `${problems.length} of ${n} documents (seed ${seed}) were not refused as they should be:\n  ${problems.slice(0, 15).join("\n  ")}`,
        );
      }
    });

    it("renders every accepted document so that PyYAML (compose v1) reads what Sundeck checked", async () => {
      const misread: Misread[] = [];
      cases.forEach((c, i) => {
        const o = outcomes[i];
        if (o.kind !== "rendered") return;
        const meant = expectedRendered(o.project, []);
        // the checked document itself must be what the input said (else the parse, not the renderer, is wrong)
        const parsed = differences(canon(o.project.doc), canon(c.checked));
        const py = reads.get(c.id)!;
        let report = readingReport(py, ourReading(o.rendered), meant);
        if (parsed.length)
          report = `  the checked document is not what the input said:\n${describeDifferences(parsed, "Sundeck checked", "    ")}\n${report}`;
        if (!report) return;
        misread.push({ c, rendered: o.rendered, report, py, meant });
      });
      if (misread.length) throw new Error(await fuzzReport(title, seed, n, misread));
    }, 120_000);
  });
}

fuzzSuite("renderer fuzz: hostile values", SEED, CASES, false);
fuzzSuite("renderer fuzz: hostile mapping keys", (SEED ^ 0x9e3779b9) >>> 0, KEY_CASES, true);
