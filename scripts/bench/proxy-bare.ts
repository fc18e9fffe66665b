/**
 * The reference path of the proxy benchmark (`--reference`): the least a Bun.serve + fetch proxy can do (request
 * headers passed on as they came, no signal, no timer, no routing, no stats), the design Sundeck's proxy had before
 * its own HTTP/1.1 engine (src/proxy/h1). It shows what that design would cost at best next to what the engine costs.
 *
 *   bun scripts/bench/proxy-bare.ts --upstream 127.0.0.1:PORT      prints `READY {"port":N}`
 */
import { parseArgs } from "node:util";
import { announce } from "./proxy-upstream";

const { values: v } = parseArgs({ args: Bun.argv.slice(2), options: { upstream: { type: "string" } } });
if (!v.upstream) throw new Error("--upstream is required");
const upstream = v.upstream;

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  development: false,
  idleTimeout: 120,
  maxRequestBodySize: Number.MAX_SAFE_INTEGER,
  fetch(req) {
    const url = req.url;
    const path = url.indexOf("/", url.indexOf("://") + 3);
    return fetch(`http://${upstream}${path < 0 ? "/" : url.slice(path)}`, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      redirect: "manual",
      decompress: false,
    } as RequestInit);
  },
});
announce(server);
