/**
 * The reference reader for HTTP/1.1 framing: Node's own llhttp parser (the one node:http uses, default strictness),
 * run under Node, never Bun. Reads JSON lines on stdin, `{id, kind: "request"|"response", data (base64), method?}`,
 * and answers one JSON line per input: the messages llhttp read (method or status, url, version, headers as raw
 * pairs, body as base64, whether the message completed) and the error that stopped it, if any. `method` is the
 * request method a response answers (HEAD responses have no body).
 */
"use strict";
process.noDeprecation = true;
const { HTTPParser, methods, allMethods } = process.binding("http_parser");
const readline = require("node:readline");

const MAX_HEADER_SIZE = 64 * 1024;

function parse(kind, data, method) {
  const parser = new HTTPParser();
  const messages = [];
  let cur = null;
  let pendingHeaders = [];
  let pendingUrl = "";
  parser.initialize(kind === "request" ? HTTPParser.REQUEST : HTTPParser.RESPONSE, {}, MAX_HEADER_SIZE, 0);
  parser[HTTPParser.kOnMessageBegin] = () => {
    pendingHeaders = [];
    pendingUrl = "";
  };
  // a long head comes in batches (node's _http_common does the same): fields and the url so far
  parser[HTTPParser.kOnHeaders] = (headers, url) => {
    pendingHeaders.push(...headers);
    pendingUrl += url ?? "";
  };
  parser[HTTPParser.kOnHeadersComplete] = (major, minor, headers, m, url, status, reason, upgrade, keepAlive) => {
    const raw = headers ?? pendingHeaders;
    const pairs = [];
    for (let i = 0; i < raw.length; i += 2) pairs.push([raw[i], raw[i + 1]]);
    cur = {
      // node names methods from allMethods (QUERY is past the end of `methods`)
      method: kind === "request" ? (allMethods ?? methods)[m] : null,
      url: kind === "request" ? url || pendingUrl : null,
      status: kind === "response" ? status : null,
      reason: kind === "response" ? reason : null,
      version: `${major}.${minor}`,
      headers: pairs,
      body: [],
      upgrade: !!upgrade,
      keepAlive: !!keepAlive,
      complete: false,
    };
    messages.push(cur);
    // a response to HEAD has no body, as node's client tells its parser
    if (kind === "response" && method === "HEAD") return 1;
    return 0;
  };
  parser[HTTPParser.kOnBody] = (b) => {
    cur.body.push(Buffer.from(b));
  };
  parser[HTTPParser.kOnMessageComplete] = () => {
    if (cur) cur.complete = true;
  };
  let error = null;
  const r = parser.execute(data);
  if (r instanceof Error) error = r.code || r.message;
  else if (!error) {
    // end of input: what a close means to the message in progress (close-delimited bodies end here)
    const f = parser.finish();
    if (f instanceof Error) error = f.code || f.message;
  }
  parser.close();
  return {
    messages: messages.map((m) => ({ ...m, body: Buffer.concat(m.body).toString("base64") })),
    error,
  };
}

const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  if (!line.trim()) return;
  const q = JSON.parse(line);
  let out;
  try {
    out = { id: q.id, ...parse(q.kind, Buffer.from(q.data, "base64"), q.method) };
  } catch (e) {
    out = { id: q.id, messages: [], error: `THROWN ${e.message}` };
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
});
