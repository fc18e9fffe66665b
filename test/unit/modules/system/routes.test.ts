/** Health, the error and header conventions, the dashboard routes and system settings on a real server. */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { connect } from "node:net";
import { Client } from "../../../helpers/http";
import { startTestServer, type TestServer } from "../../../helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ public_host: "203.0.113.10" });
});
afterAll(() => s.stop());

describe("health", () => {
  it("answers 200 without authentication while the database is reachable", async () => {
    const r = await s.anon.get("/api/health");
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: "ok" });
  });

  it("answers 503 when the database file has been removed under it", async () => {
    const t = await startTestServer();
    const { renameSync } = await import("node:fs");
    renameSync(t.ctx.db.path, `${t.ctx.db.path}.moved`);
    try {
      expect((await t.anon.get("/api/health")).status).toBe(503);
    } finally {
      renameSync(`${t.ctx.db.path}.moved`, t.ctx.db.path);
    }
    expect((await t.anon.get("/api/health")).status).toBe(200);
    await t.stop();
  });

  it("answers 503 when the database is unreachable", async () => {
    const t = await startTestServer();
    t.ctx.db.close();
    const r = await t.anon.get("/api/health");
    expect(r.status).toBe(503);
    expect(r.text).toBe("Service Unavailable");
    await t.stop();
  });
});

describe("errors and headers", () => {
  it("answers unknown API paths with a one-line text/plain 404", async () => {
    const r = await s.root.get("/api/does-not-exist");
    expect(r.status).toBe(404);
    expect(r.text).toBe("Not Found");
    expect(r.headers.get("content-type")).toBe("text/plain; charset=utf-8");
  });

  it("sends security headers on API, error and dashboard responses", async () => {
    for (const r of [
      await s.anon.get("/api/health"),
      await s.anon.get("/api/me"),
      await s.anon.get("/"),
      await s.anon.get("/activity"),
    ]) {
      expect(r.headers.get("x-content-type-options")).toBe("nosniff");
      expect(r.headers.get("x-frame-options")).toBe("DENY");
      expect(r.headers.get("content-security-policy")).toContain("default-src 'self'");
      expect(r.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(r.headers.get("referrer-policy")).toBe("same-origin");
    }
  });

  it("serves the dashboard for client routes and 404 for missing files", async () => {
    const page = await s.anon.get("/users/42");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.text).toContain('<div id="app">');
    expect((await s.anon.get("/missing.js")).status).toBe(404);
  });

  it("never leaks internals in a 500", async () => {
    s.ctx.db.sqlite.run("ALTER TABLE settings RENAME TO settings_away");
    try {
      const r = await s.root.get("/api/system/public-host");
      expect(r.status).toBe(500);
      expect(r.text).toBe("Internal Server Error");
    } finally {
      s.ctx.db.sqlite.run("ALTER TABLE settings_away RENAME TO settings");
    }
    expect(s.ctx.logs.snapshot().some((l) => l.includes("[http] request failed") && l.includes("settings"))).toBe(true);
  });
});

describe("body limits", () => {
  const big = (n: number) => JSON.stringify({ username: "x".repeat(n), password: "p", role: "viewer" });

  it("answers 413 for a body over 1 MiB", async () => {
    const r = await s.root.request("POST", "/api/users", big(1024 * 1024 + 10), { "content-type": "application/json" });
    expect(r.status).toBe(413);
    expect(r.text).toBe("Payload Too Large");
  });

  it("answers 413 for a chunked body over 1 MiB with no Content-Length", async () => {
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent++ < 20) c.enqueue(chunk);
        else c.close();
      },
    });
    const res = await fetch(`${s.url}/api/users`, {
      method: "POST",
      headers: { cookie: `session=${s.root.cookie}`, "content-type": "application/json" },
      body,
      // @ts-expect-error bun supports duplex
      duplex: "half",
    });
    expect(res.status).toBe(413);
  });

  it("accepts a body just under the limit (and then validates it)", async () => {
    const r = await s.root.request("POST", "/api/users", big(1024 * 1024 - 100), { "content-type": "application/json" });
    expect(r.status).toBe(400);
  });

  it("closes the connection after a 413 whose body is still arriving, so a stop does not wait for it", async () => {
    const t = await startTestServer();
    try {
      const sock = connect(t.server.port, "127.0.0.1");
      await new Promise((r) => sock.once("connect", r));
      let answer = "";
      sock.on("data", (d) => {
        answer += d.toString();
      });
      const closed = new Promise((r) => sock.once("close", r));
      // declares 8 MiB and sends only a little of it: the answer must not wait for the rest
      sock.write(
        `PUT /api/apps/shop/certs/a.test HTTP/1.1\r\nhost: x\r\ncookie: session=${t.root.cookie}\r\n` +
          "content-type: application/json\r\ncontent-length: 8388608\r\n\r\n" +
          "x".repeat(4096),
      );
      await closed;
      expect(answer).toStartWith("HTTP/1.1 413");
      expect(answer.toLowerCase()).toContain("connection: close");
    } finally {
      const started = Date.now();
      await t.stop();
      expect(Date.now() - started).toBeLessThan(5_000);
    }
  });

  it("answers 415 for a body type it does not take", async () => {
    const r = await s.root.request("POST", "/api/users", "<x/>", { "content-type": "application/xml" });
    expect(r.status).toBe(415);
  });
});

describe("public host", () => {
  it("starts from the config and is changed by a super-admin, with an activity entry", async () => {
    expect((await s.root.get("/api/system/public-host")).json).toEqual({ public_host: "203.0.113.10" });
    const r = await s.root.put("/api/system/public-host", { public_host: "Apps.Example.com" });
    expect(r.json).toEqual({ public_host: "apps.example.com" });
    const e = (await s.root.get("/api/activity?categories=system&limit=1")).json.entries[0];
    expect(e).toMatchObject({ action: "public_host_changed", target: "apps.example.com" });
    const viewer = await s.user("pete", "viewer");
    expect((await viewer.get("/api/system/public-host")).json).toEqual({ public_host: "apps.example.com" });
    for (const bad of ["has space", "http://x.com", "a/b"])
      expect((await s.root.put("/api/system/public-host", { public_host: bad })).status).toBe(400);
  });
});

describe("process logs", () => {
  it("returns the buffer oldest first, including lines caused by requests", async () => {
    await s.anon.post("/api/auth/login", { username: "root", password: "definitely-wrong" });
    const r = await s.root.get("/api/system/process-logs");
    expect(r.status).toBe(200);
    expect(Array.isArray(r.json)).toBe(true);
    const line = r.json.find((l: string) => l.includes("login failed"));
    expect(line).toMatch(/^\d{4}-\d\d-\d\dT\S+Z WARN {2}\[auth\] login failed username=root ip=127.0.0.1$/);
    expect(r.json.indexOf(line)).toBeGreaterThan(r.json.findIndex((l: string) => l.includes("management api")));
  });
});

describe("OpenAPI", () => {
  it("describes every REST route with its auth requirement", async () => {
    const doc = (await s.root.get("/api/openapi.json")).json;
    expect(doc.openapi).toStartWith("3.");
    for (const p of [
      "/api/users",
      "/api/users/{id}",
      "/api/activity",
      "/api/activity/{id}",
      "/api/apikeys",
      "/api/system/audit-config",
      "/api/health",
    ]) {
      expect(doc.paths[p]).toBeDefined();
    }
    expect(doc.paths["/api/users"].post.requestBody.content["application/json"].schema.properties.role).toBeDefined();
    expect(doc.paths["/api/users"].get["x-sundeck-auth"]).toBe("role super_admin");
    expect(doc.paths["/api/health"].get["x-sundeck-auth"]).toBe("none");
    expect(doc.paths["/api/activity"].get.parameters.map((p: any) => p.name).sort()).toEqual([
      "app",
      "before",
      "categories",
      "limit",
    ]);
  });
});

describe("HTTP timeouts", () => {
  it("drops a connection that has not finished its request headers within about 10 s", async () => {
    const port = Number(new URL(s.url).port);
    const started = Date.now();
    const closedAfter = await new Promise<number>((resolve) => {
      const sock = connect(port, "127.0.0.1", () => sock.write("GET /api/health HTTP/1.1\r\nHost: x\r\n"));
      const trickle = setInterval(() => sock.write("X-Slow: 1\r\n"), 1000);
      sock.on("close", () => {
        clearInterval(trickle);
        resolve(Date.now() - started);
      });
    });
    expect(closedAfter).toBeGreaterThan(8_000);
    expect(closedAfter).toBeLessThan(16_000);
  }, 20_000);
});

describe("HSTS", () => {
  it("is sent only when the request came over HTTPS", async () => {
    expect((await s.anon.get("/api/health")).headers.get("strict-transport-security")).toBeNull();
    const t = await startTestServer({ trusted_proxies: ["127.0.0.1"] });
    try {
      const tls = await t.anon.get("/api/health", { "x-forwarded-proto": "https" });
      expect(tls.headers.get("strict-transport-security")).toStartWith("max-age=");
      expect(
        (await t.anon.get("/api/health", { "x-forwarded-proto": "http" })).headers.get("strict-transport-security"),
      ).toBeNull();
      // from an untrusted peer the header means nothing
      expect(
        (await s.anon.get("/api/health", { "x-forwarded-proto": "https" })).headers.get("strict-transport-security"),
      ).toBeNull();
    } finally {
      await t.stop();
    }
  });
});

describe("client address", () => {
  it("ignores X-Forwarded-For from an untrusted peer", async () => {
    await new Client(s.url).post(
      "/api/auth/login",
      { username: "nobody-1", password: "whatever-1" },
      { "x-forwarded-for": "198.51.100.7" },
    );
    const e = (await s.root.get("/api/activity?categories=auth&limit=1")).json.entries[0];
    expect(e.ip).toBe("127.0.0.1");
  });

  it("believes X-Forwarded-For from a trusted proxy", async () => {
    const t = await startTestServer({ trusted_proxies: ["127.0.0.0/8"] });
    try {
      await new Client(t.url).post(
        "/api/auth/login",
        { username: "nobody-2", password: "whatever-2" },
        { "x-forwarded-for": "198.51.100.7, 127.0.0.5" },
      );
      const e = (await t.root.get("/api/activity?categories=auth&limit=1")).json.entries[0];
      expect(e.ip).toBe("198.51.100.7");
    } finally {
      await t.stop();
    }
  });
});

describe("Sundeck's own proxy", () => {
  it("is believed about the client only with this process's token, from loopback", async () => {
    const login = (headers: Record<string, string>) =>
      new Client(s.url).post("/api/auth/login", { username: "nobody-3", password: "whatever-3" }, headers);
    await login({ "x-forwarded-for": "198.51.100.8", "x-sundeck-proxy": s.ctx.proxyToken });
    expect((await s.root.get("/api/activity?categories=auth&limit=1")).json.entries[0].ip).toBe("198.51.100.8");
    await login({ "x-forwarded-for": "198.51.100.9", "x-sundeck-proxy": "not-the-token" });
    expect((await s.root.get("/api/activity?categories=auth&limit=1")).json.entries[0].ip).toBe("127.0.0.1");
    const tls = await s.anon.get("/api/health", { "x-forwarded-proto": "https", "x-sundeck-proxy": s.ctx.proxyToken });
    expect(tls.headers.get("strict-transport-security")).toStartWith("max-age=");
  });
});
