/**
 * The reference path of the proxy benchmark (`--reference`): the least a Bun fetch proxy can do, with the same fetch
 * options as src/proxy/forward.ts (request headers passed on as they came, no signal, no timer, no routing, no stats).
 * What it costs over direct is Bun's (and the machine's) share; what Sundeck costs over it is Sundeck's code.
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
