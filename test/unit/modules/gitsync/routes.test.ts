/** The git webhook while git sync is not built: 404 with an empty body whatever arrives, and a warning when enabled. */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { startTestServer, type TestServer } from "../../../helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

describe("git webhook while git sync is unavailable", () => {
  it.each([
    ["no signature", {}],
    ["a signature", { "x-hub-signature-256": "sha256=00" }],
  ])("answers 404 with an empty body to a push with %s", async (_n, headers) => {
    const r = await s.anon.post("/api/git/webhook", { ref: "refs/heads/main" }, headers);
    expect(r.status).toBe(404);
    expect(r.text).toBe("");
  });

  it("answers the same to a malformed body, which it never parses", async () => {
    const r = await s.anon.request("POST", "/api/git/webhook", "{broken", { "content-type": "application/json" });
    expect(r.status).toBe(404);
    expect(r.text).toBe("");
  });

  it("warns at start when the config enables git sync", async () => {
    const t = await startTestServer({ git_sync: { enabled: true, remote: "https://git.example.com/ops/apps.git" } as any });
    try {
      expect(t.ctx.logs.snapshot().some((l) => l.includes("WARN  [gitsync] git_sync.enabled is set"))).toBe(true);
      expect((await t.anon.post("/api/git/webhook", {})).status).toBe(404);
    } finally {
      await t.stop();
    }
  });
});
