/**
 * A deterministic corpus of raw HTTP/1.1 request bytes for the proxy's differential test: valid seed requests, each
 * then mutated one to three times toward where parsers disagree (framing, field syntax, hosts, versions).
 */
import { rng } from "../../scripts/bench/activity-seed";

/** One case: the bytes a client sends on a fresh connection, and how they were made. */
export interface CorpusCase {
  id: number;
  bytes: Buffer;
  note: string;
}

/** A known request-smuggling case (Connection naming Content-Length); always case 0, byte for byte. */
export const SMUGGLING_CASE =
  "POST /x HTTP/1.1\r\nHost: a.test\r\nConnection: Content-Length\r\nContent-Length: 66\r\n\r\n" +
  "GET /smuggled HTTP/1.1\r\nHost: a.test\r\nX-Forwarded-For: 6.6.6.6\r\n\r\n";

interface Chunk {
  size: string;
  ext: string;
  sizeEol: string;
  data: string;
  dataEol: string;
}

/** One request as lines, so that mutations can work on fields; strings are latin1. */
interface Msg {
  line: string;
  headers: string[];
  body: string | Chunk[];
  trailers: string[];
}

type Rand = () => number;

const BROWSER = [
  "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
  "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
  "Accept-Language: en-GB,en;q=0.5",
  "Accept-Encoding: gzip, deflate, br, zstd",
  "Connection: keep-alive",
  "Sec-Fetch-Mode: navigate",
];

const chunk = (data: string, ext = ""): Chunk => ({
  size: data.length.toString(16),
  ext,
  sizeEol: "\r\n",
  data,
  dataEol: "\r\n",
});
const lastChunk = (): Chunk => ({ size: "0", ext: "", sizeEol: "\r\n", data: "", dataEol: "" });

function req(line: string, headers: string[], body: string | Chunk[] = "", trailers: string[] = []): Msg {
  return { line, headers, body, trailers };
}
const get = (host: string, target: string, extra: string[] = [], v = "1.1") =>
  req(`GET ${target} HTTP/${v}`, [`Host: ${host}`, ...BROWSER, ...extra]);
const withBody = (method: string, host: string, target: string, body: string, extra: string[] = [], v = "1.1") =>
  req(`${method} ${target} HTTP/${v}`, [`Host: ${host}`, ...extra, `Content-Length: ${body.length}`], body);
const chunked = (host: string, target: string, parts: Chunk[], trailers: string[] = [], extra: string[] = []) =>
  req(`POST ${target} HTTP/1.1`, [`Host: ${host}`, ...extra, "Transfer-Encoding: chunked"], [...parts, lastChunk()], trailers);

const JSON_TYPE = "Content-Type: application/json";
const FORM_TYPE = "Content-Type: application/x-www-form-urlencoded";
const BINARY = Array.from({ length: 256 }, (_, i) => String.fromCharCode(i)).join("");
// well under 32 fields in all: from 32 on, llhttp hands the target over with the first batch and parse.cjs loses it
const MANY_FIELDS = Array.from({ length: 16 }, (_, i) => `X-Field-${i}: value ${i}`);

/** Valid requests, as a browser, curl or an API client sends them. */
const SEEDS: Array<[string, () => Msg[]]> = [
  ["get", () => [get("a.test", "/")]],
  [
    "get-cookies-query",
    () => [get("b.test", "/search?q=caf%C3%A9&page=2&sort=", ["Cookie: sid=abc123; theme=dark; consent=yes"])],
  ],
  ["get-wildcard-host", () => [get("x.w.test", "/static/app.3f9c.js", ["Referer: http://x.w.test/", 'If-None-Match: W/"5e-1"'])]],
  ["get-host-port", () => [get("a.test:8080", "/p/a?x=1&y=%20")]],
  ["get-auth", () => [get("a.test", "/api/me", ["Authorization: Bearer eyJhbGciOi.x.y", "Accept: application/json"])]],
  ["get-long-value", () => [get("a.test", "/", [`X-Long: ${"v".repeat(6000)}`, `Cookie: ${"k=v; ".repeat(300)}z=1`])]],
  ["get-many-fields", () => [get("b.test", "/", MANY_FIELDS)]],
  ["get-hop-by-hop", () => [get("a.test", "/", ["Keep-Alive: timeout=5", "TE: trailers", "Proxy-Authorization: Basic eA=="])]],
  [
    "get-connection-named",
    () => [req("GET / HTTP/1.1", ["Host: a.test", "Connection: keep-alive, X-Hop", "X-Hop: 1", "X-Keep: 2"])],
  ],
  ["get-close", () => [req("GET /bye HTTP/1.1", ["Host: b.test", "Connection: close"])]],
  ["get-cl-zero", () => [req("GET / HTTP/1.1", ["Host: a.test", "Content-Length: 0"])]],
  ["post-form", () => [withBody("POST", "a.test", "/login", "user=ann&pass=s%20cret", [FORM_TYPE])]],
  ["put-json", () => [withBody("PUT", "b.test", "/api/items/7", '{"name":"x","tags":["a","b"]}', [JSON_TYPE])]],
  ["patch-json", () => [withBody("PATCH", "x.w.test", "/api/items/7", '{"done":true}', [JSON_TYPE])]],
  ["post-binary", () => [withBody("POST", "a.test", "/upload", BINARY, ["Content-Type: application/octet-stream"])]],
  ["post-chunked", () => [chunked("a.test", "/c", [chunk("hello "), chunk("world")])]],
  ["post-chunked-ext-trailer", () => [chunked("b.test", "/c", [chunk("abc", ";name=v"), chunk("de", ';q="x y"')], ["X-Sum: 5"])]],
  ["post-chunked-empty", () => [chunked("a.test", "/c", [])]],
  ["http10-get", () => [req("GET /old HTTP/1.0", ["Host: a.test", "User-Agent: Wget/1.21"])]],
  ["http10-keep-alive", () => [req("GET /old HTTP/1.0", ["Host: b.test", "Connection: keep-alive"])]],
  ["http10-post", () => [withBody("POST", "a.test", "/form", "a=1", [FORM_TYPE, "Connection: keep-alive"], "1.0")]],
  ["absolute-form", () => [req("GET http://a.test/p?q HTTP/1.1", ["Host: a.test", "Accept: */*"])]],
  ["absolute-form-query", () => [req("GET http://b.test?x HTTP/1.1", ["Host: b.test"])]],
  ["pipelined-2", () => [get("a.test", "/one"), get("a.test", "/two")]],
  ["pipelined-3", () => [get("b.test", "/1"), withBody("POST", "b.test", "/2", "body-2", [FORM_TYPE]), get("b.test", "/3")]],
  ["pipelined-chunked", () => [chunked("a.test", "/c", [chunk("xyz")]), get("a.test", "/after")]],
  ["expect-continue", () => [withBody("POST", "a.test", "/exp", "x".repeat(1024), ["Expect: 100-continue"])]],
  ["head", () => [req("HEAD /fixed HTTP/1.1", ["Host: a.test", "Accept: */*"])]],
  [
    "options",
    () => [req("OPTIONS /api HTTP/1.1", ["Host: b.test", "Origin: http://c.test", "Access-Control-Request-Method: PUT"])],
  ],
  ["options-star", () => [req("OPTIONS * HTTP/1.1", ["Host: a.test"])]],
  ["delete", () => [req("DELETE /api/items/7 HTTP/1.1", ["Host: x.w.test", "Authorization: Basic YTpi"])]],
];

function serialize(msgs: Msg[]): string {
  let s = "";
  for (const m of msgs) {
    s += `${m.line}\r\n${m.headers.map((h) => `${h}\r\n`).join("")}\r\n`;
    if (typeof m.body === "string") s += m.body;
    else {
      for (const c of m.body) s += `${c.size}${c.ext}${c.sizeEol}${c.data}${c.data ? c.dataEol : ""}`;
      s += `${m.trailers.map((t) => `${t}\r\n`).join("")}\r\n`;
    }
  }
  return s;
}

/** Mutations that work on one request's lines; each returns its note. */
type FieldMutation = (m: Msg, r: Rand) => string;
/** Mutations that work on the serialized bytes. */
type ByteMutation = (s: string, r: Rand) => [string, string];

const int = (r: Rand, n: number) => Math.floor(r() * n);
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[int(r, xs.length)];
/** JSON-escaped, DEL and bytes past ASCII too (an NBSP in a note must not pass for a space). */
const esc = (s: string) =>
  JSON.stringify(s)
    .slice(1, -1)
    .replace(/[\x7f-\xff]/g, (c) => `\\x${c.charCodeAt(0).toString(16)}`);
const nameOf = (h: string) => h.slice(0, Math.max(0, h.indexOf(":")));
const findHeader = (m: Msg, name: string) => m.headers.findIndex((h) => nameOf(h).toLowerCase() === name);
const dropHeader = (m: Msg, name: string) => {
  m.headers = m.headers.filter((h) => nameOf(h).toLowerCase() !== name);
};
function setHeader(m: Msg, name: string, value: string): void {
  const i = findHeader(m, name.toLowerCase());
  if (i < 0) m.headers.push(`${name}: ${value}`);
  else m.headers[i] = `${name}: ${value}`;
}
const bodyText = (m: Msg) => (typeof m.body === "string" ? m.body : m.body.map((c) => c.data).join(""));

/** Make `m` carry its body chunked (Transfer-Encoding, no Content-Length). */
function toChunked(m: Msg, r: Rand): Chunk[] {
  if (typeof m.body !== "string") return m.body;
  const text = m.body || "hello";
  const cut = 1 + int(r, text.length);
  m.body = [chunk(text.slice(0, cut)), ...(cut < text.length ? [chunk(text.slice(cut))] : []), lastChunk()];
  dropHeader(m, "content-length");
  setHeader(m, "Transfer-Encoding", "chunked");
  return m.body;
}

/** Make `m` carry its body with Content-Length (a few bytes when it had none); returns the length. */
function toLength(m: Msg): number {
  const text = bodyText(m) || "hello";
  m.body = text;
  m.trailers = [];
  dropHeader(m, "transfer-encoding");
  setHeader(m, "Content-Length", String(text.length));
  return text.length;
}

const TE_VALUES = ["Chunked", "chunked, chunked", "gzip, chunked", " chunked", "chunked\x0b", "xchunked", "chunked, gzip"];
const CONNECTION_VALUES = ["Content-Length", "Transfer-Encoding", "Host", "X-Forwarded-For", "close", "keep-alive", "Cookie"];
// no QUERY: parse.cjs names methods from node's `methods` list, which has no entry at QUERY's llhttp code
const METHODS = ["FOO", "PROPFIND", "PURGE", "GETT", "G\tET"];

const FIELD_MUTATIONS: FieldMutation[] = [
  function duplicate(m, r) {
    const line = m.headers[int(r, m.headers.length)];
    m.headers.splice(int(r, m.headers.length + 1), 0, line);
    return `duplicate ${nameOf(line)}`;
  },
  function remove(m, r) {
    // the last field line stays: the other field mutations need one
    if (m.headers.length < 2) return "delete nothing";
    return `delete ${nameOf(m.headers.splice(int(r, m.headers.length), 1)[0])}`;
  },
  function reorder(m, r) {
    const [i, j] = [int(r, m.headers.length), int(r, m.headers.length)];
    [m.headers[i], m.headers[j]] = [m.headers[j], m.headers[i]];
    return `swap fields ${i} and ${j}`;
  },
  function nameCase(m, r) {
    const i = int(r, m.headers.length);
    const [n, rest] = [nameOf(m.headers[i]), m.headers[i].slice(nameOf(m.headers[i]).length)];
    const name = pick(r, [
      n.toUpperCase(),
      n.toLowerCase(),
      [...n].map((c, k) => (k % 2 ? c.toUpperCase() : c.toLowerCase())).join(""),
    ]);
    m.headers[i] = name + rest;
    return `name case ${name}`;
  },
  function colonSpace(m, r) {
    const i = int(r, m.headers.length);
    const n = nameOf(m.headers[i]);
    const v = m.headers[i].slice(n.length + 1).trim();
    const forms = [
      `${n} :${v}`,
      `${n}\t: ${v}`,
      `${n}:${v}`,
      `${n}:\t${v}`,
      `${n}:   ${v}`,
      `${n}: ${v} `,
      `${n}: ${v}\t`,
      ` ${n}: ${v}`,
    ];
    m.headers[i] = pick(r, forms);
    return `field spacing ${esc(m.headers[i].slice(0, 40))}`;
  },
  function obsFold(m, r) {
    const i = int(r, m.headers.length);
    m.headers.splice(i + 1, 0, pick(r, [" folded", "\tmore", " ", " x: y"]));
    return `obs-fold after ${nameOf(m.headers[i])}`;
  },
  function contentLength(m, r) {
    const n = toLength(m);
    const i = findHeader(m, "content-length");
    const forms: Array<[string, () => void]> = [
      ["+1", () => (m.headers[i] = `Content-Length: ${n + 1}`)],
      ["-1", () => (m.headers[i] = `Content-Length: ${n - 1}`)],
      ["n, n", () => (m.headers[i] = `Content-Length: ${n}, ${n}`)],
      ["second identical", () => m.headers.push(`Content-Length: ${n}`)],
      ["second different", () => m.headers.splice(i, 0, `Content-Length: ${n + 2}`)],
      ["leading zeros", () => (m.headers[i] = `Content-Length: 000${n}`)],
      ["plus sign", () => (m.headers[i] = `Content-Length: +${n}`)],
      ["16+ digits", () => (m.headers[i] = `Content-Length: ${String(n).padStart(17, "0")}`)],
      ["huge", () => (m.headers[i] = "Content-Length: 18446744073709551617")],
      ["empty", () => (m.headers[i] = "Content-Length: ")],
    ];
    const [what, apply] = pick(r, forms);
    apply();
    return `content-length ${what}`;
  },
  function transferEncoding(m, r) {
    toChunked(m, r);
    const i = findHeader(m, "transfer-encoding");
    const value = pick(r, TE_VALUES);
    const forms: Array<[string, () => void]> = [
      [`value ${esc(value)}`, () => (m.headers[i] = `Transfer-Encoding: ${value}`)],
      ["two lines", () => m.headers.splice(i, 0, `Transfer-Encoding: ${pick(r, ["gzip", "chunked", "identity"])}`)],
      ["plus content-length", () => m.headers.splice(int(r, m.headers.length + 1), 0, `Content-Length: ${int(r, 40)}`)],
      ["on HTTP/1.0", () => (m.line = m.line.replace("HTTP/1.1", "HTTP/1.0"))],
    ];
    const [what, apply] = pick(r, forms);
    apply();
    return `transfer-encoding ${what}`;
  },
  function connection(m, r) {
    const v = pick(r, CONNECTION_VALUES);
    if (r() < 0.5) setHeader(m, "Connection", v);
    else m.headers.splice(int(r, m.headers.length + 1), 0, `Connection: ${v}`);
    return `connection ${v}`;
  },
  function chunkLine(m, r) {
    const chunks = toChunked(m, r);
    const c = pick(r, chunks);
    const size = c.size;
    const forms: Array<[string, () => void]> = [
      ["17 digits", () => (c.size = size.padStart(17, "0"))],
      ["negative", () => (c.size = `-${size}`)],
      ["0x", () => (c.size = `0x${size}`)],
      ["space before", () => (c.size = ` ${size}`)],
      ["space after", () => (c.size = `${size} `)],
      ["tab after", () => (c.size = `${size}\t`)],
      ["tab before", () => (c.size = `\t${size}`)],
      ["size +1", () => (c.size = (c.data.length + 1).toString(16))],
      ["ext", () => (c.ext = pick(r, [";a", ";a=b", ';a="q"', "; a=b", ";a = b", ';a="q\\"r"', ";", ";a=b;c"]))],
      ["no data crlf", () => (c.dataEol = "")],
      ["lf size line", () => (c.sizeEol = "\n")],
      ["lf data", () => (c.dataEol = "\n")],
    ];
    const [what, apply] = pick(r, forms);
    apply();
    return `chunk ${esc(what)} on ${esc(size)}`;
  },
  function host(m, r) {
    const [method, , version] = m.line.split(" ");
    const forms: Array<[string, () => void]> = [
      ["two lines", () => m.headers.splice(int(r, m.headers.length + 1), 0, "Host: b.test")],
      ["userinfo-like", () => setHeader(m, "Host", "a.test:@evil.example")],
      ["path in host", () => setHeader(m, "Host", "a.test:80/evil?x")],
      ["empty", () => setHeader(m, "Host", "")],
      ["ipv6", () => setHeader(m, "Host", pick(r, ["[::1]", "[::1]:8080", "[2001:db8::1]", "::1"]))],
      ["target userinfo", () => (m.line = `${method} http://b.test:80@a.test/ ${version}`)],
      ["target authority", () => (m.line = `${method} http://b.test/other?z ${version}`)],
      ["target ipv6", () => (m.line = `${method} http://[::1]:80/ ${version}`)],
      ["case and dot", () => setHeader(m, "Host", pick(r, ["A.TEST", "a.test.", "a.test:80", "a.test:"]))],
    ];
    const [what, apply] = pick(r, forms);
    apply();
    return `host ${what}`;
  },
  function method(m, r) {
    const [name, ...rest] = m.line.split(" ");
    const next = pick(r, [name.toLowerCase(), name[0] + name.slice(1).toLowerCase(), ...METHODS]);
    m.line = [next, ...rest].join(" ");
    return `method ${esc(next)}`;
  },
  function version(m, r) {
    const v = pick(r, ["HTTP/1.2", "HTTP/2.0", "http/1.1", "HTTP/1.1 ", "HTTP/1.0", "HTTP/1.10", "HTTP/01.1"]);
    m.line = m.line.replace(/HTTP\/1\.[01]$/, v);
    return `version ${esc(v)}`;
  },
];

const SPECIAL = [" ", "\t", "\r", "\n", "\0", "\x0b", "\x0c", "\x7f", "\x85", "\xa0", ",", ":", ";", '"', "@", "/", "#"];

/** A position, four times in five inside the head, where parsers differ most. */
function position(s: string, r: Rand): number {
  const head = s.indexOf("\r\n\r\n");
  return r() < 0.8 && head > 0 ? int(r, head + 4) : int(r, s.length + 1);
}

const BYTE_MUTATIONS: ByteMutation[] = [
  function flip(s, r) {
    const i = Math.min(position(s, r), s.length - 1);
    const b = s.charCodeAt(i) ^ (1 << int(r, 8));
    return [s.slice(0, i) + String.fromCharCode(b) + s.slice(i + 1), `flip @${i} to 0x${b.toString(16)}`];
  },
  function insert(s, r) {
    const i = position(s, r);
    const b = int(r, 256);
    return [s.slice(0, i) + String.fromCharCode(b) + s.slice(i), `insert 0x${b.toString(16)} @${i}`];
  },
  function erase(s, r) {
    const i = Math.min(position(s, r), s.length - 1);
    return [s.slice(0, i) + s.slice(i + 1), `delete @${i}`];
  },
  function special(s, r) {
    const i = position(s, r);
    const c = pick(r, SPECIAL);
    return [s.slice(0, i) + c + s.slice(i), `insert ${esc(c)} @${i}`];
  },
  function bareLf(s, r) {
    if (r() < 0.2) return [s.replaceAll("\r\n", "\n"), "all CRLF to LF"];
    const at: number[] = [];
    for (let i = s.indexOf("\r\n"); i >= 0; i = s.indexOf("\r\n", i + 1)) at.push(i);
    const i = pick(r, at);
    return [s.slice(0, i) + s.slice(i + 1), `CRLF to LF @${i}`];
  },
];

/**
 * `count` cases from `seed`: case 0 is SMUGGLING_CASE, the next ones the seeds as they are, the rest mutated seeds.
 * The same arguments always give the same bytes.
 */
export function generateCorpus(count: number, seed: number): CorpusCase[] {
  const r = rng(seed);
  const out: CorpusCase[] = [{ id: 0, bytes: Buffer.from(SMUGGLING_CASE, "latin1"), note: "known smuggling case" }];
  for (const [name, make] of SEEDS)
    out.push({ id: out.length, bytes: Buffer.from(serialize(make()), "latin1"), note: `seed ${name}` });
  while (out.length < count) {
    const [name, make] = pick(r, SEEDS);
    const msgs = make();
    const n = 1 + int(r, 3);
    const kinds = Array.from({ length: n }, () => int(r, FIELD_MUTATIONS.length + BYTE_MUTATIONS.length)).sort((a, b) => a - b);
    const notes: string[] = [];
    let s: string | null = null;
    for (const k of kinds) {
      if (k < FIELD_MUTATIONS.length) notes.push(FIELD_MUTATIONS[k](pick(r, msgs), r));
      else {
        const [next, note] = BYTE_MUTATIONS[k - FIELD_MUTATIONS.length]((s ??= serialize(msgs)), r);
        s = next;
        notes.push(note);
      }
    }
    out.push({ id: out.length, bytes: Buffer.from(s ?? serialize(msgs), "latin1"), note: `${name}: ${notes.join("; ")}` });
  }
  return out.slice(0, count);
}
