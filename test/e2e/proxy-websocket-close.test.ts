/**
 * What a browser sees when the replica under its WebSocket leaves (a rolling deploy's drain deadline): Chromium,
 * connected through the proxy's plain listener to a Bun.serve WebSocket upstream, gets a `close` event with code 1001
 * and `wasClean` true once the proxy closes the replica's tunnels, not the 1006 of a cut connection, and a new socket
 * opens at once (the route still serves).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Server } from "bun";
import type { Listeners } from "../../src/proxy/listeners";
import { openDashboard } from "../helpers/dashboard";
import { plainProxy } from "../helpers/proxy";

let up: Server<undefined>;
let proxy: Listeners;
let dash: Awaited<ReturnType<typeof openDashboard>>;
const problems: string[] = [];

beforeAll(async () => {
  up = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req, srv) {
      if (srv.upgrade(req)) return;
      return new Response("<!doctype html><title>ws</title>", { headers: { "content-type": "text/html" } });
    },
    websocket: {
      open(ws) {
        ws.send("hello");
      },
      message() {},
    },
  });
  proxy = await plainProxy({ apps: [{ slug: "ws", hosts: ["127.0.0.1"], upstream: `127.0.0.1:${up.port}` }] });
  dash = await openDashboard(problems, 600);
}, 60_000);

afterAll(async () => {
  await dash?.browser.close();
  await proxy?.stop(true);
  up?.stop(true);
});

test("a WebSocket whose replica leaves closes 1001, clean, and a new one opens", async () => {
  const { page } = dash;
  await page.goto(`http://127.0.0.1:${proxy.ports().main}/`);
  const closed = page.evaluate(
    () =>
      new Promise<{ code: number; clean: boolean; hello: boolean }>((resolve) => {
        const ws = new WebSocket(location.href.replace(/^http/, "ws"));
        let hello = false;
        ws.onmessage = () => (hello = true);
        ws.onclose = (e) => resolve({ code: e.code, clean: e.wasClean, hello });
      }),
  );
  const leaving = new Set([`127.0.0.1:${up.port}`]);
  // the socket is open once the proxy holds a tunnel to the replica
  const t0 = Date.now();
  while (proxy.upstreamBusy(leaving) === 0 && Date.now() - t0 < 10_000) await Bun.sleep(20);
  expect(proxy.closeTunnels(leaving)).toBe(1);
  expect(await closed).toEqual({ code: 1001, clean: true, hello: true });
  const again = await page.evaluate(
    () =>
      new Promise<string>((resolve, reject) => {
        const ws = new WebSocket(location.href.replace(/^http/, "ws"));
        ws.onmessage = (e) => resolve(String(e.data));
        ws.onerror = () => reject(new Error("no second socket"));
      }),
  );
  expect(again).toBe("hello");
  expect(problems).toEqual([]);
}, 60_000);
