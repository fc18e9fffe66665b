/**
 * An attacker's try at alert webhooks, each against the real thing: the delivery client against raw local listeners
 * that trickle, stall or answer 1xx before a redirect; a URL naming port 0; allow_private_destinations on against
 * link-local in every spelling; Slack markup in what a manage user writes (a rule name) reaching an ops channel.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import net from "node:net";
import { checkUrl } from "../../../../src/modules/webhooks/model";
import { slackMessage } from "../../../../src/modules/webhooks/payloads";
import { createSafeHttp } from "../../../../src/modules/webhooks/safe-http";
import type { AlertNotification } from "../../../../src/shared/alerts";
import { type CountingListener, countingListener } from "../../../helpers/webhook-receiver";

const BODY = JSON.stringify({ event: "test" });

/** A raw listener on 127.0.0.1 that hands each connection to `serve` and counts them. */
async function rawListener(serve: (s: net.Socket) => void): Promise<{ port: number; connections: () => number; close(): void }> {
  let n = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    n++;
    sockets.add(s);
    s.on("error", () => {});
    s.on("close", () => sockets.delete(s));
    serve(s);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => n,
    close() {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

/** Write `chunk` every `ms` until the socket goes away. */
function drip(s: net.Socket, chunk: string, ms: number) {
  const timer = setInterval(() => (s.destroyed ? clearInterval(timer) : s.write(chunk)), ms);
  s.on("close", () => clearInterval(timer));
}

describe("a hostile receiver", () => {
  const http = createSafeHttp({ allowPrivate: true, limits: { headersMs: 300, totalMs: 3_000 } });

  it("cannot hold the response-head deadline open by trickling header bytes", async () => {
    const rx = await rawListener((s) => {
      s.write("HTTP/1.1 200 OK\r\n");
      drip(s, "X-Slow: a\r\n", 20);
    });
    const t0 = Date.now();
    const r = await http.post(`http://127.0.0.1:${rx.port}/`, BODY);
    expect(r).toMatchObject({ ok: false, status: 0, error: "no response headers within 300 ms" });
    expect(Date.now() - t0).toBeLessThan(2_000);
    rx.close();
  });

  it("cannot hold it open with an endless run of interim 100 answers", async () => {
    const rx = await rawListener((s) => drip(s, "HTTP/1.1 100 Continue\r\n\r\n", 5));
    const r = await http.post(`http://127.0.0.1:${rx.port}/`, BODY);
    expect(r).toMatchObject({ ok: false, status: 0, error: "no response headers within 300 ms" });
    rx.close();
  });

  it("gets no redirect followed when it sends 100 and 103 before a 302 to a loopback trap", async () => {
    const trap = await countingListener("127.0.0.1");
    const rx = await rawListener((s) =>
      s.once("data", () =>
        s.end(
          "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n" +
            `HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:${trap.port}/\r\ncontent-length: 0\r\n\r\n`,
        ),
      ),
    );
    const r = await http.post(`http://127.0.0.1:${rx.port}/`, BODY);
    expect(r).toMatchObject({ ok: false, status: 302, retry: false, error: "redirect not followed (302)" });
    expect(trap.connections).toBe(0);
    rx.close();
    await trap.close();
  });
});

describe("port 0", () => {
  let trap: CountingListener;
  beforeAll(async () => {
    trap = await countingListener("127.0.0.1");
  });
  afterAll(() => trap.close());

  it("is refused when a destination is stored, instead of being delivered to port 80", () => {
    expect(checkUrl("https://example.com:0/hook", false)).toEqual({ error: "url must name a port from 1 to 65535" });
    expect(checkUrl("http://example.com:00/hook", true)).toEqual({ error: "url must name a port from 1 to 65535" });
    expect(checkUrl("https://example.com:8443/hook", false)).toBe("https://example.com:8443/hook");
  });

  it("is refused by the delivery client, which dials nothing", async () => {
    const asked: string[] = [];
    const http = createSafeHttp({
      allowPrivate: true,
      resolve: async (h) => {
        asked.push(h);
        return ["127.0.0.1"];
      },
    });
    const r = await http.post("http://hooks.test:0/", BODY);
    expect(r).toMatchObject({ ok: false, status: 0, retry: false, address: null, error: "url must name a port from 1 to 65535" });
    expect(asked).toEqual([]);
    expect(trap.connections).toBe(0);
  });
});

describe("allow_private_destinations on", () => {
  it("still refuses link-local (cloud metadata) in every spelling, and unspecified", async () => {
    const trap = await countingListener("127.0.0.1");
    const http = createSafeHttp({ allowPrivate: true, resolve: async () => ["169.254.169.254"] });
    for (const host of [
      "169.254.169.254",
      "0xa9fea9fe",
      "2852039166",
      "0251.0376.0251.0376",
      "[::ffff:169.254.169.254]",
      "[::ffff:a9fe:a9fe]",
      "[64:ff9b::a9fe:a9fe]",
      "[fe80::1]",
      "metadata.test",
      "0",
      "[::]",
    ]) {
      const r = await http.post(`http://${host}:${trap.port}/latest/meta-data/`, BODY);
      expect(r.ok).toBe(false);
      expect(r.error).toMatch(/^destination address \S+ refused \((link-local|unspecified)\)$/);
      // a name is judged at delivery; a literal is already refused when the destination is stored
      if (!host.endsWith(".test")) expect(checkUrl(`http://${host}/`, true)).toHaveProperty("error");
    }
    expect(trap.connections).toBe(0);
    await trap.close();
  });
});

describe("Slack markup from what a manage user writes", () => {
  const n: AlertNotification = {
    event: "alert.firing",
    rule: { id: 1, name: "<!channel> <@U123> & <https://evil.test|click>", kind: "cpu", threshold: 80, duration: "5m" },
    app_slug: "blog",
    state: "firing",
    value: 95,
    message: "cpu of blog/web-1 at 95% <!here>",
    created_at: "2026-11-22T12:00:00.000Z",
  };

  it("is escaped everywhere Slack reads markup, the fallback text included, so a rule name cannot ping the channel", () => {
    const m = slackMessage(n);
    expect(m.text).not.toContain("<");
    expect(m.text).toContain("&lt;!channel&gt; &lt;@U123&gt; &amp; &lt;https://evil.test|click&gt;");
    expect(m.text).toContain("&lt;!here&gt;");
    const mrkdwn = JSON.stringify(m.blocks.slice(1));
    expect(mrkdwn).not.toMatch(/<[!@#h]/);
  });
});
