/**
 * A replica whose server exits with the proxy's connection still in its accept queue resets it as the connect
 * completes: nothing was sent, so an idempotent request moves to the next replica, and a POST gets its 502.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { Endpoint } from "../../../../src/compose/model";
import { LogSink } from "../../../../src/log/logger";
import { RequestStats } from "../../../../src/modules/metrics/aggregator";
import { type RawServer, serveRaw } from "../../../../src/proxy/h1/server";
import { createProxyHandler } from "../../../../src/proxy/handler";
import { buildRouteTable, type RouteTable } from "../../../../src/proxy/route-table";
import { type HostUpstream, startUpstream } from "../../../helpers/upstream";

const sink = new LogSink({ stdout: false, level: "debug" });
const endpoints: Endpoint[] = [{ service: "web", port: 1, path: "/", tls: null, hosts: ["exit.test"] }];

let live: HostUpstream;
let proxy: RawServer;
let table: RouteTable;
/** Run once, synchronously, while the next request is being routed (before the engine dials). */
let onRouting: (() => void) | null = null;

beforeAll(() => {
  live = startUpstream("live");
  const handler = createProxyHandler({
    table: () => table,
    stats: new RequestStats(),
    log: sink.logger("proxy"),
    proxyToken: "t",
  });
  proxy = serveRaw({
    hostname: "127.0.0.1",
    port: 0,
    core: handler.core,
    info: (peer) => {
      onRouting?.();
      onRouting = null;
      return { clientIp: peer, secure: false };
    },
    log: sink.logger("proxy"),
  });
});

afterAll(async () => {
  await proxy.stop(true);
  await live.stop();
});

/**
 * Send `init` to a route whose first replica is a listener that never accepts and closes its listening socket right
 * after the engine's connect went out: the kernel completes the handshake, then resets the queued connection.
 */
async function throughExitingReplica(init: RequestInit): Promise<{ status: number; text: string; events: string[] }> {
  const exiting = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  table = buildRouteTable({
    apps: [{ slug: "exit", endpoints, labels: { endpoints, ratelimit: null, allow: null, registries: null }, stopped: false }],
    upstreams: () => [`127.0.0.1:${exiting.port}`, live.addr],
    defaults: { ratelimit: { requests: 1e9, windowMs: 60_000, burst: 1e9, by: "ip" }, tls: "off" },
  });
  // a microtask queued while routing runs after the engine's data callback, so after its connect and before the
  // event loop sees the connection complete; the pause lets the handshake finish first
  onRouting = () =>
    queueMicrotask(() => {
      Bun.sleepSync(20);
      exiting.stop(true);
    });
  // what the engine did about the first replica, from its log: "retry <error>" or "502 <error>"
  const events: string[] = [];
  const off = sink.subscribe((line) => {
    const error = line.match(/ error=(\S+)/)?.[1];
    if (line.includes("trying again")) events.push(`retry ${error}`);
    else if (line.includes("upstream request failed")) events.push(`502 ${error}`);
  });
  try {
    const r = await fetch(`http://127.0.0.1:${proxy.port}/name`, { ...init, headers: { host: "exit.test" } });
    return { status: r.status, text: await r.text(), events };
  } finally {
    off();
    exiting.stop(true);
  }
}

describe("a replica that resets the connection before taking it", () => {
  it("moves a GET to the next replica", async () => {
    const r = await throughExitingReplica({});
    expect(r.events).toEqual(["retry ECONNRESET"]);
    expect([r.status, r.text]).toEqual([200, "live"]);
  });

  it("moves a PUT with a body too: none of it was sent", async () => {
    const r = await throughExitingReplica({ method: "PUT", body: "data" });
    expect(r.events).toEqual(["retry ECONNRESET"]);
    expect([r.status, r.text]).toEqual([200, "live"]);
  });

  it("answers a POST with 502, never sending it twice", async () => {
    const count = live.count;
    const r = await throughExitingReplica({ method: "POST", body: "x" });
    expect(r.events).toEqual(["502 ECONNRESET"]);
    expect(r.status).toBe(502);
    expect(live.count).toBe(count);
  });
});
