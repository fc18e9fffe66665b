/** Login throttling and lockout: 10 a minute per IP, then (username, IP) locks doubling to 30 minutes. */
import { afterAll, describe, expect, it } from "bun:test";
import { createContext } from "../../../../src/context";
import { LogSink } from "../../../../src/log/logger";
import { lockDuration } from "../../../../src/modules/auth/lockout";
import { startServer } from "../../../../src/server";
import { FakeClock } from "../../../helpers/clock";
import { Client } from "../../../helpers/http";
import { PASSWORD, startTestServer, type TestServer } from "../../../helpers/server";

const servers: TestServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
});

async function fresh(clock = new FakeClock()) {
  const s = await startTestServer({}, { clock });
  servers.push(s);
  await s.ctx.users.create(
    { username: "alice", password: PASSWORD, role: "viewer" },
    { userId: null, name: "t", source: "cli", ip: null },
  );
  return { s, clock };
}

const login = (s: { url: string }, password: string, headers: Record<string, string> = {}) =>
  new Client(s.url).post("/api/auth/login", { username: "alice", password }, headers);

describe("lock durations", () => {
  it("start at 1 minute after 5 failures and double up to 30 minutes", () => {
    expect([1, 4].map(lockDuration)).toEqual([0, 0]);
    expect(lockDuration(5)).toBe(60_000);
    expect(lockDuration(6)).toBe(120_000);
    expect(lockDuration(7)).toBe(240_000);
    expect(lockDuration(9)).toBe(960_000);
    expect(lockDuration(10)).toBe(1_800_000);
    expect(lockDuration(50)).toBe(1_800_000);
  });
});

describe("login throttling", () => {
  it("allows 10 logins a minute per IP, then answers 429 with Retry-After", async () => {
    const { s, clock } = await fresh();
    for (let i = 0; i < 10; i++) expect((await login(s, PASSWORD)).status).toBe(200);
    const r = await login(s, PASSWORD);
    expect(r.status).toBe(429);
    expect(r.text).toBe("Too Many Requests");
    expect(Number(r.headers.get("retry-after"))).toBe(6);
    clock.advance(6_000);
    expect((await login(s, PASSWORD)).status).toBe(200);
  });

  it("locks the (username, IP) pair after 5 failures, answering exactly like wrong credentials", async () => {
    const { s, clock } = await fresh();
    for (let i = 0; i < 5; i++) expect((await login(s, "wrong-password")).text).toBe("Unauthorized: invalid credentials");
    const locked = await login(s, PASSWORD);
    expect(locked.status).toBe(401);
    expect(locked.text).toBe("Unauthorized: invalid credentials");
    expect(locked.headers.get("set-cookie")).toBeNull();
    clock.advance(59_000);
    expect((await login(s, PASSWORD)).status).toBe(401);
    clock.advance(2_000);
    expect((await login(s, PASSWORD)).status).toBe(200);
  });

  it("doubles the lock with each further failure and clears it on success", async () => {
    const { s, clock } = await fresh();
    for (let i = 0; i < 5; i++) await login(s, "wrong-password");
    clock.advance(61_000);
    await login(s, "wrong-password"); // 6th failure: 2 minutes
    clock.advance(119_000);
    expect((await login(s, PASSWORD)).status).toBe(401);
    clock.advance(2_000);
    expect((await login(s, PASSWORD)).status).toBe(200);
    // cleared: the next single failure does not lock
    await login(s, "wrong-password");
    expect((await login(s, PASSWORD)).status).toBe(200);
  });

  it("locks only the pair: the same user from another IP still gets in", async () => {
    const other = await startTestServer({ trusted_proxies: ["127.0.0.1"] });
    servers.push(other);
    await other.ctx.users.create(
      { username: "alice", password: PASSWORD, role: "viewer" },
      { userId: null, name: "t", source: "cli", ip: null },
    );
    for (let i = 0; i < 5; i++) await login(other, "wrong-password", { "x-forwarded-for": "203.0.113.5" });
    expect((await login(other, PASSWORD, { "x-forwarded-for": "203.0.113.5" })).status).toBe(401);
    expect((await login(other, PASSWORD, { "x-forwarded-for": "203.0.113.6" })).status).toBe(200);
  });

  it("keeps the lock across a restart", async () => {
    const clock = new FakeClock();
    const { s } = await fresh(clock);
    for (let i = 0; i < 5; i++) await login(s, "wrong-password");
    await s.stop();
    const ctx = createContext(s.ctx.config, { clock, logs: new LogSink({ stdout: false }) });
    const again = await startServer(ctx);
    try {
      expect((await login(again, PASSWORD)).status).toBe(401);
      clock.advance(61_000);
      expect((await login(again, PASSWORD)).status).toBe(200);
    } finally {
      await again.stop();
    }
  });

  it("records failed and successful logins in the activity log with the client address", async () => {
    const { s } = await fresh();
    await login(s, "wrong-password");
    await login(s, PASSWORD);
    const page = (await s.root.get("/api/activity?categories=auth")).json;
    const [ok, failed] = page.entries;
    expect(ok).toMatchObject({
      category: "auth",
      action: "login_succeeded",
      actor_name: "alice",
      ip: "127.0.0.1",
      app_slug: null,
    });
    expect(failed).toMatchObject({ category: "auth", action: "login_failed", actor_name: "alice", error: "wrong password" });
  });
});
