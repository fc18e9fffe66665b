/**
 * A Bun upstream on the host for proxy tests: echoes request headers, streams bodies both ways, answers slowly,
 * sends gzip, cookies and hop-by-hop headers, and echoes WebSockets (a busybox httpd can do none of that).
 */
import type { Server } from "bun";

export interface HostUpstream {
  server: Server<unknown>;
  port: number;
  /** `127.0.0.1:<port>`, as a route upstream. */
  addr: string;
  /** Requests answered. */
  count: number;
  /** Bytes /big has produced so far in its latest response. */
  produced: number;
  /** Upload bytes /stream-echo has read so far in its latest request. */
  consumed: number;
  /** Close codes and reasons the WebSocket echo saw from the proxy. */
  wsCloses: Array<{ code: number; reason: string }>;
  stop(): Promise<void>;
}

/** A gzip body the tests compare byte for byte. */
export const GZIP_BODY = Bun.gzipSync(new TextEncoder().encode("hello gzip ".repeat(200)));

const MiB = 1024 * 1024;

interface WsData {
  headers: Record<string, string>;
  url: string;
}

/** Start an upstream named `name` (answered at /name, so tests can tell replicas apart). */
export function startUpstream(name = "host"): HostUpstream {
  const self = { count: 0, produced: 0, consumed: 0, wsCloses: [] as HostUpstream["wsCloses"] } as HostUpstream;
  const server = Bun.serve<WsData>({
    port: 0,
    hostname: "127.0.0.1",
    maxRequestBodySize: 1024 * MiB,
    idleTimeout: 60,
    async fetch(req, srv) {
      self.count++;
      const url = new URL(req.url);
      if (req.headers.get("upgrade")?.toLowerCase() === "websocket") {
        const protocols = (req.headers.get("sec-websocket-protocol") ?? "").split(",").map((p) => p.trim());
        const pick = protocols.includes("chat.v2") ? "chat.v2" : undefined;
        const data = { headers: Object.fromEntries(req.headers), url: req.url };
        if (srv.upgrade(req, { data, headers: pick ? { "sec-websocket-protocol": pick } : undefined })) return undefined;
        return new Response("upgrade failed", { status: 400 });
      }
      switch (url.pathname) {
        case "/name":
          return new Response(name);
        case "/stream-echo": {
          // answer at once and echo the upload as it arrives, counting what was read
          self.consumed = 0;
          const reader = req.body!.getReader();
          return new Response(
            new ReadableStream({
              async pull(c) {
                const { done, value } = await reader.read();
                if (done) return c.close();
                self.consumed += value.length;
                c.enqueue(value);
              },
            }),
            { headers: { "content-type": "application/octet-stream" } },
          );
        }
        case "/big": {
          const total = Number(url.searchParams.get("mb") ?? "1") * MiB;
          const chunk = new Uint8Array(256 * 1024).fill(120);
          self.produced = 0;
          return new Response(
            new ReadableStream({
              pull(c) {
                if (self.produced >= total) return c.close();
                c.enqueue(chunk);
                self.produced += chunk.length;
              },
            }),
            { headers: { "content-type": "application/octet-stream", "content-length": String(total) } },
          );
        }
        case "/slow":
          await Bun.sleep(Number(url.searchParams.get("ms") ?? "1000"));
          return new Response("slow");
        case "/gzip":
          return new Response(GZIP_BODY, { headers: { "content-encoding": "gzip", "content-type": "text/plain" } });
        case "/cookies": {
          const h = new Headers({
            location: "/next?a=1&b=%20",
            connection: "x-hop-resp",
            "x-hop-resp": "1",
            "keep-alive": "timeout=5",
          });
          h.append("set-cookie", "a=1; Path=/; HttpOnly");
          h.append("set-cookie", "b=2; Expires=Wed, 21 Oct 2037 07:28:00 GMT");
          return new Response("see other", { status: 302, headers: h });
        }
        case "/204":
          return new Response(null, { status: 204, headers: { "x-empty": "1" } });
        case "/304":
          return new Response(null, { status: 304, headers: { etag: '"v1"' } });
        case "/fixed":
          return new Response("hello world!", { headers: { "content-type": "text/plain" } });
        case "/hsts":
          return new Response("own", { headers: { "strict-transport-security": "max-age=5" } });
        default: {
          const body = req.body ? await req.text() : null;
          return Response.json({
            name,
            method: req.method,
            url: req.url,
            headers: [...req.headers],
            body,
          });
        }
      }
    },
    websocket: {
      open(ws) {
        ws.send(JSON.stringify({ hello: name, url: ws.data.url, headers: ws.data.headers }));
      },
      message(ws, message) {
        if (typeof message === "string" && message.startsWith("close:")) {
          const [, code, reason] = message.split(":");
          ws.close(Number(code), reason);
          return;
        }
        if (message === "terminate") {
          ws.terminate();
          return;
        }
        ws.send(message);
      },
      close(_ws, code, reason) {
        self.wsCloses.push({ code, reason });
      },
    },
  });
  self.server = server;
  self.port = server.port!;
  self.addr = `127.0.0.1:${server.port}`;
  self.stop = async () => {
    await server.stop(true);
  };
  return self;
}
