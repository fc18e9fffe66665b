/** Setup, login and sessions: the JWT cookie, one 401 line for every failure, logout and token versions. */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { SignJWT } from "jose";
import { PASSWORD, startTestServer, type TestServer } from "../../../helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

function decode(token: string) {
  const [h, p] = token.split(".");
  return { header: JSON.parse(atob(h)), payload: JSON.parse(Buffer.from(p, "base64url").toString()) };
}

describe("first-run setup", () => {
  it("is refused once a user exists", async () => {
    expect((await s.anon.get("/api/setup/status")).json).toEqual({ needs_setup: false });
    const r = await s.anon.as({}).post("/api/setup", { username: "second", password: PASSWORD });
    expect(r.status).toBe(409);
    expect(r.text).toStartWith("Conflict");
    expect(s.ctx.userRepo.byUsername("second")).toBeUndefined();
  });
});

describe("login", () => {
  it("sets an HttpOnly session cookie carrying an HS256 JWT with iss, aud, tv and a 24 h lifetime", async () => {
    await s.user("carol", "viewer");
    const res = await fetch(`${s.url}/api/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "carol", password: PASSWORD }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ username: "carol", role: "viewer" });
    const cookie = res.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^session=[^;]+; /);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Lax"); // tls.mode off
    expect(cookie).toContain("Path=/");
    const { header, payload } = decode(/^session=([^;]+)/.exec(cookie)![1]);
    expect(header.alg).toBe("HS256");
    expect(payload.iss).toBe("sundeck");
    expect(payload.aud).toBe("sundeck-dashboard");
    expect(payload.tv).toBe(s.ctx.userRepo.byUsername("carol")!.tokenVersion);
    expect(payload.exp - payload.iat).toBe(86400);
  });

  it("answers wrong password and unknown user with the same 401 line", async () => {
    const wrong = await s.anon.post("/api/auth/login", { username: "carol", password: "not-the-password" });
    const unknown = await s.anon.post("/api/auth/login", { username: "nobody-here", password: "whatever-pass" });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.text).toBe("Unauthorized: invalid credentials");
    expect(unknown.text).toBe(wrong.text);
    expect(wrong.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(wrong.headers.get("set-cookie")).toBeNull();
  });

  it("matches usernames without regard to case", async () => {
    const c = s.anon.as({});
    expect((await c.post("/api/auth/login", { username: "CAROL", password: PASSWORD })).status).toBe(200);
    expect((await c.get("/api/me")).json.username).toBe("carol");
  });

  it("uses SameSite=Strict when TLS is on", async () => {
    const t = await startTestServer({ tls: { mode: "local", email: "" } });
    try {
      const res = await fetch(`${t.url}/api/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "root", password: PASSWORD }),
      });
      expect(res.headers.get("set-cookie")).toContain("SameSite=Strict");
    } finally {
      await t.stop();
    }
  });
});

describe("session cookie over HTTPS", () => {
  it("is marked Secure when the request came over HTTPS through a trusted proxy", async () => {
    const t = await startTestServer({ trusted_proxies: ["127.0.0.1"], tls: { mode: "local", email: "" } });
    try {
      const login = (proto: string) =>
        fetch(`${t.url}/api/auth/login`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-forwarded-proto": proto },
          body: JSON.stringify({ username: "root", password: PASSWORD }),
        });
      expect((await login("https")).headers.get("set-cookie")).toContain("; Secure");
      expect((await login("http")).headers.get("set-cookie")).not.toContain("Secure");
    } finally {
      await t.stop();
    }
  });
});

describe("session tokens", () => {
  const sign = (
    claims: Record<string, unknown>,
    opts: { key?: Uint8Array; alg?: string; exp?: number; iss?: string; aud?: string } = {},
  ) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: opts.alg ?? "HS256" })
      .setIssuer(opts.iss ?? "sundeck")
      .setAudience(opts.aud ?? "sundeck-dashboard")
      .setIssuedAt()
      .setExpirationTime(opts.exp ?? Math.floor(Date.now() / 1000) + 3600)
      .sign(opts.key ?? s.ctx.keys.session);

  it("accepts a well-formed token for the current token version", async () => {
    const u = s.ctx.userRepo.byUsername("root")!;
    const token = await sign({ sub: String(u.id), tv: u.tokenVersion });
    expect((await s.anon.as({ cookie: token }).get("/api/me")).status).toBe(200);
  });

  it.each([
    ["signed with another key", { key: new Uint8Array(32).fill(7) }],
    ["expired", { exp: Math.floor(Date.now() / 1000) - 10 }],
    ["from another issuer", { iss: "someone-else" }],
    ["for another audience", { aud: "other" }],
  ])("rejects a token %s", async (_name, opts) => {
    const u = s.ctx.userRepo.byUsername("root")!;
    const token = await sign({ sub: String(u.id), tv: u.tokenVersion }, opts as any);
    const r = await s.anon.as({ cookie: token }).get("/api/me");
    expect(r.status).toBe(401);
    expect(r.text).toBe("Unauthorized");
  });

  it("rejects an unsigned (alg none) token", async () => {
    const u = s.ctx.userRepo.byUsername("root")!;
    const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const now = Math.floor(Date.now() / 1000);
    const token = `${enc({ alg: "none", typ: "JWT" })}.${enc({ sub: String(u.id), tv: u.tokenVersion, iss: "sundeck", aud: "sundeck-dashboard", exp: now + 60 })}.`;
    expect((await s.anon.as({ cookie: token }).get("/api/me")).status).toBe(401);
  });

  it("rejects a token whose tv is older than the user's", async () => {
    const u = s.ctx.userRepo.byUsername("root")!;
    const token = await sign({ sub: String(u.id), tv: u.tokenVersion - 1 });
    expect((await s.anon.as({ cookie: token }).get("/api/me")).status).toBe(401);
  });
});

describe("token version", () => {
  it("is bumped by logout, which ends every session of the user", async () => {
    const a = await s.user("dave", "manage");
    const b = s.anon.as({});
    await b.post("/api/auth/login", { username: "dave", password: PASSWORD });
    const out = await a.post("/api/auth/logout");
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await a.get("/api/me")).status).toBe(401);
    expect((await b.get("/api/me")).status).toBe(401);
  });

  it("is bumped by a password change; the caller gets a fresh session and old ones die", async () => {
    const a = await s.user("erin", "viewer");
    const other = s.anon.as({});
    await other.post("/api/auth/login", { username: "erin", password: PASSWORD });
    const bad = await a.put("/api/me/password", { current_password: "wrong-password", new_password: "another-password-1" });
    expect(bad.status).toBe(400);
    expect(bad.text).toBe("Bad Request: current_password is wrong");
    expect((await a.get("/api/me")).status).toBe(200);
    const short = await a.put("/api/me/password", { current_password: PASSWORD, new_password: "short" });
    expect(short.status).toBe(400);
    expect(short.text).toContain("at least 8 characters");
    const ok = await a.put("/api/me/password", { current_password: PASSWORD, new_password: "another-password-1" });
    expect(ok.status).toBe(204);
    expect((await a.get("/api/me")).status).toBe(200);
    expect((await other.get("/api/me")).status).toBe(401);
    expect((await s.anon.post("/api/auth/login", { username: "erin", password: PASSWORD })).status).toBe(401);
    expect((await s.anon.as({}).post("/api/auth/login", { username: "erin", password: "another-password-1" })).status).toBe(200);
  });

  it("is bumped by a role change", async () => {
    const a = await s.user("frank", "viewer");
    const id = s.ctx.userRepo.byUsername("frank")!.id;
    expect((await s.root.put(`/api/users/${id}`, { role: "manage" })).status).toBe(200);
    expect((await a.get("/api/me")).status).toBe(401);
  });

  it("is not bumped by an update that changes nothing", async () => {
    const a = await s.user("gina", "viewer");
    const id = s.ctx.userRepo.byUsername("gina")!.id;
    expect((await s.root.put(`/api/users/${id}`, { role: "viewer" })).status).toBe(200);
    expect((await a.get("/api/me")).status).toBe(200);
  });
});

describe("/api/me", () => {
  it("returns id, username, role and granted apps", async () => {
    const c = await s.user("hank", "viewer", ["blog", "shop"]);
    const r = await c.get("/api/me");
    expect(r.json).toEqual({ id: c.id, username: "hank", role: "viewer", app_access: ["blog", "shop"] });
  });
});
