/**
 * Upstreams for the differential test (run under Node, never Bun): W node:http servers that record every complete
 * request they read, so what the proxy forwards is read by the same llhttp that parse.cjs uses as the reference.
 */
"use strict";
const http = require("node:http");
const readline = require("node:readline");

const count = Number(process.argv[2] ?? "1");
/** A sync is answered once server w has read nothing for this long (bytes in flight from the proxy land first)... */
const QUIET_MS = 10;
/** ...and requests begun since the last sync had this long to close (the proxy drops them as its client goes)... */
const CLOSE_GRACE_MS = 100;
/** ...or after this long. */
const SYNC_MAX_MS = 500;

const out = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);

/** Per server: last byte or close seen; requests begun and neither whole nor closed, now and at the last sync. */
const activity = Array.from({ length: count }, () => ({ last: 0, open: 0, synced: 0 }));

function record(w, req, res) {
  const a = activity[w];
  a.open++;
  const body = [];
  let done = false;
  const settle = () => {
    if (!done) a.open--;
    done = true;
  };
  req.on("data", (b) => body.push(b));
  req.on("end", () => {
    settle();
    const headers = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i], req.rawHeaders[i + 1]]);
    out({
      w,
      method: req.method,
      url: req.url,
      httpVersion: req.httpVersion,
      headers,
      body: Buffer.concat(body).toString("base64"),
    });
    res.writeHead(200, { "content-type": "text/plain", "content-length": "2" });
    res.end("ok");
  });
  req.on("close", settle);
}

function server(w) {
  const s = http.createServer({ maxHeaderSize: 65536, requireHostHeader: false }, (req, res) => record(w, req, res));
  // any Expect is served like a plain request (without a listener node answers 417 and never emits the request)
  s.on("checkExpectation", (req, res) => record(w, req, res));
  s.on("connection", (sock) => {
    const seen = () => {
      activity[w].last = performance.now();
    };
    seen();
    // a data listener also takes the socket off node's native fast path, so its bytes are seen here
    sock.on("data", seen);
    sock.on("close", seen);
  });
  // bytes the proxy sent that node's parser refuses are a finding too (once a connection); a connection cut is not
  const refused = new WeakSet();
  s.on("clientError", (err, sock) => {
    const code = String(err.code ?? err.message);
    if (code.startsWith("HPE_") && code !== "HPE_INVALID_EOF_STATE" && !refused.has(sock)) {
      refused.add(sock);
      out({ w, error: code, raw: err.rawPacket ? Buffer.from(err.rawPacket).toString("base64") : "" });
    }
    if (sock.writable) sock.end("HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    else sock.destroy();
  });
  return new Promise((resolve) => s.listen(0, "127.0.0.1", () => resolve(s.address().port)));
}

/**
 * `sync <w> <n>`: answer `{"synced":w,"n":n,"open":k}` once every record of server w so far is out; k counts the
 * requests it began reading that are neither complete nor closed.
 */
function sync(w, n) {
  const start = performance.now();
  const check = () => {
    const a = activity[w];
    const now = performance.now();
    const settled = now - a.last >= QUIET_MS && (a.open <= a.synced || now - start >= CLOSE_GRACE_MS);
    if (!settled && now - start < SYNC_MAX_MS) {
      setTimeout(check, 5);
      return;
    }
    a.synced = a.open;
    out({ synced: w, n, open: a.open });
  };
  // bytes the proxy wrote before the sync was sent may be ready in this same poll: let them be read first
  setImmediate(check);
}

Promise.all(Array.from({ length: count }, (_, w) => server(w))).then((ports) => {
  out({ ready: ports });
  const rl = readline.createInterface({ input: process.stdin });
  rl.on("line", (line) => {
    const m = /^sync (\d+) (\d+)$/.exec(line.trim());
    if (m) sync(Number(m[1]), Number(m[2]));
  });
  rl.on("close", () => process.exit(0));
});
