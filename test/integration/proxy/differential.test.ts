/**
 * Differential test of the raw HTTP/1.1 engine against Node's llhttp: the same request bytes go to llhttp
 * (parse.cjs) and through the proxy to node:http upstreams, and the engine must forward only what llhttp reads.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonicalAuthority } from "../../../src/proxy/h1/request-target";
import type { Listeners } from "../../../src/proxy/listeners";
import { type CorpusCase, generateCorpus } from "../../helpers/h1-corpus";
import { plainProxy } from "../../helpers/proxy";

const CASES = Number(process.env.SUNDECK_DIFF_CASES ?? 2000);
const SEED = Number(process.env.SUNDECK_DIFF_SEED ?? 1);
const WORKERS = 8;
const HELPERS = join(import.meta.dir, "../../helpers/llhttp");
/** Nothing new from the proxy for this long, once it answered every request llhttp read: the case is over. */
const QUIET_MS = 30;
const CASE_MS = 2000;
const SYNC_MS = 5000;

/** One message as llhttp read it (parse.cjs). */
interface RefMessage {
  method: string;
  url: string;
  headers: Array<[string, string]>;
  body: string;
  upgrade: boolean;
  complete: boolean;
}

/** What an upstream read: a complete request, or bytes its parser refused. */
type UpstreamRecord =
  | { w: number; method: string; url: string; httpVersion: string; headers: Array<[string, string]>; body: string }
  | { w: number; error: string; raw: string };

interface Problem {
  kind: string;
  detail: string;
}

/** Lines of a child's stdout. */
async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const dec = new TextDecoder();
  let buf = "";
  for await (const part of stream) {
    buf += dec.decode(part, { stream: true });
    for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
      yield buf.slice(0, i);
      buf = buf.slice(i + 1);
    }
  }
}

/** llhttp's reading of every case, in one Node process. */
async function llhttpRead(cases: CorpusCase[]): Promise<Map<number, { messages: RefMessage[]; error: string | null }>> {
  const p = Bun.spawn(["node", join(HELPERS, "parse.cjs")], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const out = new Response(p.stdout).text();
  for (const c of cases) p.stdin.write(`${JSON.stringify({ id: c.id, kind: "request", data: c.bytes.toString("base64") })}\n`);
  await p.stdin.end();
  const read = new Map();
  for (const line of (await out).split("\n").filter(Boolean)) {
    const r = JSON.parse(line);
    read.set(r.id, r);
  }
  return read;
}

/** The node:http upstreams (upstream.cjs): records per server, read up to a `sync`. */
class Upstreams {
  private readonly records: UpstreamRecord[][] = Array.from({ length: WORKERS }, () => []);
  private readonly waiting = new Map<number, (open: number) => void>();
  /** Per server: requests begun and neither complete nor closed, at the last sync. */
  private readonly open = new Array<number>(WORKERS).fill(0);
  private seq = 0;
  ports: number[] = [];
  readonly proc = Bun.spawn(["node", join(HELPERS, "upstream.cjs"), String(WORKERS)], { stdin: "pipe", stdout: "pipe" });

  async ready(): Promise<void> {
    const it = lines(this.proc.stdout);
    const first = await it.next();
    if (first.done) throw new Error("upstream.cjs exited before it was ready");
    this.ports = JSON.parse(first.value).ready;
    void (async () => {
      for await (const line of it) {
        const o = JSON.parse(line);
        if ("synced" in o) this.waiting.get(o.n)?.(o.open);
        else this.records[o.w].push(o);
      }
    })();
  }

  /** Everything server `w` read since the last sync, and how many requests it began since then that never ended. */
  async sync(w: number): Promise<{ records: UpstreamRecord[]; leftOpen: number }> {
    const n = ++this.seq;
    let timer: Timer | undefined;
    const synced = new Promise<number>((resolve, reject) => {
      this.waiting.set(n, resolve);
      timer = setTimeout(() => reject(new Error(`upstream ${w} did not answer sync ${n}`)), SYNC_MS);
    });
    this.proc.stdin.write(`sync ${w} ${n}\n`);
    this.proc.stdin.flush();
    const open = await synced.finally(() => {
      clearTimeout(timer);
      this.waiting.delete(n);
    });
    const leftOpen = Math.max(0, open - this.open[w]);
    this.open[w] = open;
    return { records: this.records[w].splice(0), leftOpen };
  }
}

/** Final responses in `buf` (1xx are interim; HEAD, 204 and 304 have no body; chunked or unframed ends the count). */
function countFinals(buf: Buffer, methods: string[], statuses: number[]): { rest: Buffer; open: boolean } {
  for (;;) {
    const end = buf.indexOf("\r\n\r\n");
    if (end < 0) return { rest: buf, open: true };
    const head = buf.toString("latin1", 0, end);
    const status = Number(/^HTTP\/\d\.\d (\d{3})/.exec(head)?.[1] ?? 0);
    if (status >= 100 && status < 200 && status !== 101) {
      buf = buf.subarray(end + 4);
      continue;
    }
    const cl = /\r\ncontent-length: *(\d+)/i.exec(head);
    const bodyless = methods[statuses.length] === "HEAD" || status === 204 || status === 304 || status === 101;
    if (!bodyless && cl === null) {
      statuses.push(status);
      return { rest: buf, open: false };
    }
    const len = bodyless ? 0 : Number(cl![1]);
    if (buf.length < end + 4 + len) return { rest: buf, open: true };
    statuses.push(status);
    buf = buf.subarray(end + 4 + len);
  }
}

/** Send `bytes` on a fresh connection; wait for a close, a quiet period after `expected` final responses, or CASE_MS. */
function exchange(port: number, bytes: Buffer, expected: number, methods: string[]): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const statuses: number[] = [];
    let buf: Buffer = Buffer.alloc(0);
    let open = true;
    let sent = 0;
    let quiet: Timer | undefined;
    let sock: { terminate(): void } | undefined;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(quiet);
      clearTimeout(limit);
      sock?.terminate();
      resolve(statuses);
    };
    const limit = setTimeout(finish, CASE_MS);
    const arm = () => {
      clearTimeout(quiet);
      if (statuses.length >= expected) quiet = setTimeout(finish, QUIET_MS);
    };
    Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        binaryType: "buffer",
        open(s) {
          sock = s;
          sent = s.write(bytes);
          arm();
        },
        drain(s) {
          if (sent < bytes.length) sent += s.write(bytes.subarray(sent));
        },
        data(_s, d) {
          if (open) ({ rest: buf, open } = countFinals(Buffer.concat([buf, d]), methods, statuses));
          arm();
        },
        close: finish,
        error: finish,
      },
    }).catch(reject);
  });
}

const HOP = ["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "host"];
const SET_BY_PROXY = ["content-length", "x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "x-real-ip", "forwarded"];
const NOT_COMPARED = new Set([...HOP, ...SET_BY_PROXY, "x-sundeck-proxy"]);

/** `v` as JSON, DEL and bytes past ASCII escaped too (an NBSP must not pass for a space). */
const show = (v: unknown) =>
  (JSON.stringify(v) ?? "undefined").replace(/[\x7f-\xff]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);

const values = (headers: Array<[string, string]>, name: string) =>
  headers.filter(([k]) => k.toLowerCase() === name).map(([, v]) => v);

/** `http://a.test?x` -> `/?x`; origin-form, `*` and authority-form unchanged. */
function originForm(url: string): string {
  const m = /^https?:\/\/[^/?#]*(.*)$/is.exec(url);
  if (m === null) return url;
  return m[1] === "" ? "/" : m[1].startsWith("/") ? m[1] : `/${m[1]}`;
}

/** How `fwd` differs from `ref`, one request llhttp read. */
function compare(ref: RefMessage, fwd: Extract<UpstreamRecord, { method: string }>): Problem[] {
  const out: Problem[] = [];
  const differ = (kind: string, want: unknown, got: unknown) =>
    out.push({ kind, detail: `llhttp ${show(want)}, upstream ${show(got)}` });
  if (fwd.method !== ref.method) differ("method differs", ref.method, fwd.method);
  if (fwd.url !== originForm(ref.url)) differ("target differs", originForm(ref.url), fwd.url);
  const named = new Set(values(ref.headers, "connection").flatMap((v) => v.split(",").map((t) => t.trim().toLowerCase())));
  const framed = values(ref.headers, "content-length").length > 0 || values(ref.headers, "transfer-encoding").length > 0;
  const endToEnd = (hs: Array<[string, string]>) =>
    hs
      .map(([k, v]) => [k.toLowerCase(), v])
      .filter(([k]) => !NOT_COMPARED.has(k) && !k.startsWith("proxy-") && !named.has(k) && (framed || k !== "expect"))
      // names with `_` are dropped on purpose (CGI servers read them as their hyphenated twins)
      .filter(([k]) => !k.includes("_"));
  const [want, got] = [endToEnd(ref.headers), endToEnd(fwd.headers)];
  if (JSON.stringify(want) !== JSON.stringify(got)) differ("fields differ", want, got);
  const absolute = /^https?:\/\/([^/?#]*)/i.exec(ref.url);
  // the engine sends the authority in canonical form (lower case, no trailing dot, plain port)
  const refHosts = (absolute ? [absolute[1]] : values(ref.headers, "host")).map(canonicalAuthority);
  const gotHosts = values(fwd.headers, "host");
  if (refHosts.length !== 1 || gotHosts.length !== 1 || gotHosts[0] !== refHosts[0]) differ("host differs", refHosts, gotHosts);
  const xff = values(fwd.headers, "x-forwarded-for");
  if (xff.length !== 1 || xff[0] !== "127.0.0.1") differ("x-forwarded-for differs", ["127.0.0.1"], xff);
  if (fwd.body !== ref.body) differ("body differs", ref.body, fwd.body);
  return out;
}

/** The requests llhttp read whole before its first error, up to and including an upgrade (it stops there). */
function readable(messages: RefMessage[]): RefMessage[] {
  const ref: RefMessage[] = [];
  for (const m of messages) {
    if (!m.complete) break;
    ref.push(m);
    if (m.upgrade) break;
  }
  return ref;
}

/**
 * Every way what the upstream read disagrees with `ref`. The engine may answer a request itself (an unknown host) and
 * go on with the next, so each forwarded request is paired with the next one llhttp read that has its method and
 * target, else with the next one at all. After an upgrade, what follows is not compared.
 */
function disagreements(ref: RefMessage[], records: UpstreamRecord[]): Problem[] {
  const upgraded = ref.at(-1)?.upgrade === true;
  const problems: Problem[] = [];
  const unread: string[] = [];
  let next = 0;
  for (const r of records) {
    if ("error" in r) {
      const raw = show(Buffer.from(r.raw, "base64").toString("latin1"));
      if (!upgraded)
        problems.push({ kind: "forwarded bytes llhttp refuses (upstream parser error)", detail: `${r.error}: ${raw}` });
      continue;
    }
    if (next >= ref.length) {
      unread.push(`${r.method} ${r.url}`);
      continue;
    }
    let i = ref.findIndex((m, k) => k >= next && m.method === r.method && originForm(m.url) === r.url);
    if (i < 0) i = next;
    for (const p of compare(ref[i], r)) problems.push({ kind: p.kind, detail: `request ${i}: ${p.detail}` });
    next = i + 1;
  }
  if (unread.length > 0 && !upgraded)
    problems.push({
      kind: "forwarded a request llhttp did not read",
      detail: `${unread.join(", ")} (llhttp read ${ref.length})`,
    });
  return problems;
}

interface Failure {
  id: number;
  note: string;
  bytes: string;
  llhttp: { messages: RefMessage[]; error: string | null };
  engineAnswered: number[];
  upstreamRead: UpstreamRecord[];
  problems: Problem[];
}

function report(failures: Failure[], path: string): string {
  const kinds = new Map<string, number>();
  for (const f of failures) for (const k of new Set(f.problems.map((p) => p.kind))) kinds.set(k, (kinds.get(k) ?? 0) + 1);
  const lines = [`${failures.length} cases disagree (all of them in ${path})`, "by kind (cases):"];
  for (const [k, n] of [...kinds].sort((a, b) => b[1] - a[1])) lines.push(`  ${n}\t${k}`);
  for (const f of failures.slice(0, 10)) {
    const bytes = f.bytes.length > 1200 ? `${f.bytes.slice(0, 1200)}... (${f.bytes.length} in all)` : f.bytes;
    lines.push("", `case ${f.id} (${f.note})`, `  bytes: ${bytes}`);
    const read = f.llhttp.messages.map((m) => `${m.method} ${m.url}${m.complete ? "" : " (incomplete)"}`);
    lines.push(`  llhttp read: [${read.join(", ")}] then ${f.llhttp.error ?? "end of input"}`);
    const got = f.upstreamRead.map((r) => ("method" in r ? `${r.method} ${r.url}` : `error ${r.error}`));
    lines.push(`  upstream read: [${got.join(", ")}]; engine answered ${JSON.stringify(f.engineAnswered)}`);
    for (const p of f.problems) lines.push(`  - ${p.kind}: ${p.detail.slice(0, 600)}`);
  }
  return lines.join("\n");
}

describe("raw engine against llhttp", () => {
  let upstreams: Upstreams;
  const fronts: Listeners[] = [];
  beforeAll(async () => {
    upstreams = new Upstreams();
    await upstreams.ready();
    for (let w = 0; w < WORKERS; w++) {
      const upstream = `127.0.0.1:${upstreams.ports[w]}`;
      fronts.push(
        await plainProxy({
          apps: [{ slug: `w${w}`, hosts: ["a.test", "b.test", "*.w.test"], upstream }],
          timeouts: { headersMs: 1000, wsConnectMs: 1000 },
          limits: { headerTimeoutMs: 300, bodyTimeoutMs: 300 },
        }),
      );
    }
  });

  afterAll(async () => {
    await Promise.all(fronts.map((f) => f.stop(true)));
    upstreams?.proc.kill();
  });

  it("forwards only what llhttp reads from the same bytes", async () => {
    const t0 = performance.now();
    const cases = generateCorpus(CASES, SEED);
    const read = await llhttpRead(cases);
    const failures: Failure[] = [];
    let [forwarded, refused, next] = [0, 0, 0];
    const halfSent: number[] = [];
    const worker = async (w: number) => {
      for (let c = cases[next++]; c !== undefined; c = cases[next++]) {
        const ll = read.get(c.id) ?? { messages: [], error: "no answer from parse.cjs" };
        const ref = readable(ll.messages);
        const methods = ref.map((m) => m.method);
        const answered = await exchange(fronts[w].ports().main, c.bytes, ref.length, methods);
        const { records, leftOpen } = await upstreams.sync(w);
        if (leftOpen > 0) halfSent.push(c.id);
        const problems = disagreements(ref, records);
        const fwd = records.filter((r) => "method" in r).length;
        if (fwd > 0) forwarded++;
        if (fwd < ref.length) refused++;
        if (problems.length > 0) {
          const bytes = show(c.bytes.toString("latin1"));
          failures.push({ id: c.id, note: c.note, bytes, llhttp: ll, engineAnswered: answered, upstreamRead: records, problems });
        }
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
    failures.sort((a, b) => a.id - b.id);
    const secs = ((performance.now() - t0) / 1000).toFixed(1);
    console.log(
      `differential (seed ${SEED}): ${cases.length} cases, ${forwarded} forwarded, ${refused} refused by the engine ` +
        `where llhttp read a request, ${cases.length - failures.length} agree, ${failures.length} fail, ${secs}s`,
    );
    // not a disagreement, but a request head the engine sent and then abandoned holds an upstream connection open
    if (halfSent.length > 0)
      console.log(
        `differential: ${halfSent.length} cases left a request half-sent upstream, e.g. ${halfSent.slice(0, 10).join(", ")}`,
      );
    if (failures.length > 0) {
      const path = join(tmpdir(), `sundeck-differential-${SEED}-${process.pid}.json`);
      writeFileSync(path, JSON.stringify(failures, null, 2));
      console.log(`differential failures written to ${path}`);
      throw new Error(report(failures, path));
    }
    expect(failures).toEqual([]);
  }, 110_000);
});
