/** The global API rate limit: burst, then 429 with Retry-After; health exempt; by ip, a header or the path. */
import { afterAll, describe, expect, it } from "bun:test";
import { FakeClock } from "../helpers/clock";
import { Client } from "../helpers/http";
import { startTestServer, type TestServer } from "../helpers/server";

const servers: TestServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
});

async function limited(by: string, clock = new FakeClock()) {
  const s = await startTestServer({ ratelimit: { requests: 6, window: "60s", burst: 3, by } }, { clock });
  servers.push(s);
  return { s, clock };
}

describe("global API rate limit", () => {
  it("allows the burst, then answers 429 with the seconds until the next token", async () => {
    const { s, clock } = await limited("ip");
    // setup already used one token of this IP
    const c = new Client(s.url);
    expect((await c.get("/api/setup/status")).status).toBe(200);
    expect((await c.get("/api/setup/status")).status).toBe(200);
    const r = await c.get("/api/setup/status");
    expect(r.status).toBe(429);
    expect(r.text).toBe("Too Many Requests");
    expect(r.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(r.headers.get("retry-after")).toBe("10"); // 6 per 60 s: one token every 10 s
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    clock.advance(9_000);
    const still = await c.get("/api/me");
    expect(still.status).toBe(429);
    expect(still.headers.get("retry-after")).toBe("1");
    clock.advance(1_000);
    expect((await c.get("/api/setup/status")).status).toBe(200);
  });

  it("leaves health checks and the dashboard alone", async () => {
    const { s } = await limited("ip");
    const c = new Client(s.url);
    for (let i = 0; i < 10; i++) expect((await c.get("/api/health")).status).toBe(200);
    for (let i = 0; i < 5; i++) await c.get("/api/setup/status");
    expect((await c.get("/api/setup/status")).status).toBe(429);
    expect((await c.get("/")).status).toBe(200);
  });

  it("can key on a header, each value with its own bucket", async () => {
    const { s } = await limited("header:X-Client");
    const a = new Client(s.url, { headers: { "x-client": "a" } });
    const b = new Client(s.url, { headers: { "x-client": "b" } });
    for (let i = 0; i < 3; i++) expect((await a.get("/api/setup/status")).status).toBe(200);
    expect((await a.get("/api/setup/status")).status).toBe(429);
    expect((await b.get("/api/setup/status")).status).toBe(200);
  });

  it("can key on the path", async () => {
    const { s } = await limited("path");
    const c = new Client(s.url);
    for (let i = 0; i < 3; i++) expect((await c.get("/api/setup/status")).status).toBe(200);
    expect((await c.get("/api/setup/status")).status).toBe(429);
    expect((await c.get("/api/me")).status).toBe(401);
  });
});
