/**
 * Real listeners for webhook tests: a raw TCP listener that counts every connection made to it (the SSRF corpus
 * asserts zero), and an HTTP receiver (Bun.serve) that records each request it gets and answers what it is told.
 */
import net from "node:net";

/** A TCP listener counting connections; `answer` decides what each connection gets once a request head arrived. */
export interface CountingListener {
  host: string;
  port: number;
  readonly connections: number;
  close(): Promise<void>;
}

/**
 * Listen on `host:port` (port 0: any). `mode` "ok" answers 200 to any request, "silent" accepts and never writes,
 * "hang-body" sends a head and then a body that never ends.
 */
export function countingListener(
  host = "127.0.0.1",
  port = 0,
  mode: "ok" | "silent" | "hang-body" = "ok",
): Promise<CountingListener> {
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    connections++;
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => {});
    let seen = "";
    s.on("data", (d) => {
      seen += d.toString("latin1");
      if (!seen.includes("\r\n\r\n") || mode === "silent") return;
      if (mode === "ok") s.end("HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
      else s.write(`HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\n${"x".repeat(1000)}`);
      seen = "";
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      const addr = server.address() as net.AddressInfo;
      resolve({
        host,
        port: addr.port,
        get connections() {
          return connections;
        },
        close: () =>
          new Promise<void>((r) => {
            for (const s of sockets) s.destroy();
            server.close(() => r());
          }),
      });
    });
  });
}

/** A request as a receiver saw it. */
export interface Received {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** An HTTP receiver on 127.0.0.1 recording requests; `respond` builds each answer (200 by default). */
export function webhookReceiver(
  respond: (req: Received, n: number) => Response = () => new Response("ok"),
  tls?: { cert: string; key: string },
) {
  const received: Received[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls,
    async fetch(req) {
      const u = new URL(req.url);
      const r: Received = {
        method: req.method,
        path: u.pathname + u.search,
        headers: Object.fromEntries(req.headers.entries()),
        body: await req.text(),
      };
      received.push(r);
      return respond(r, received.length);
    },
  });
  return {
    port: server.port as number,
    url: (path = "/hook") => `${tls ? "https" : "http"}://127.0.0.1:${server.port}${path}`,
    received,
    stop: () => server.stop(true),
  };
}
