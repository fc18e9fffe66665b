/** The git webhook while it is unavailable (git sync off, or no secret): 404 with an empty body whatever arrives. */
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

  it("answers the same while git sync is on but no webhook secret is set", async () => {
    const t = await startTestServer({
      git_sync: { enabled: true, remote: "http://127.0.0.1:9/ops/apps.git", poll_enabled: false } as any,
    });
    try {
      const r = await t.anon.post("/api/git/webhook", {}, { "x-hub-signature-256": `sha256=${"0".repeat(64)}` });
      expect(r.status).toBe(404);
      expect(r.text).toBe("");
    } finally {
      await t.stop();
    }
  });
});
