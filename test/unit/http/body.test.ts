/** Request body limits per route (1 MiB, 32 MiB upload-restore, 256 KiB certificates), answered with 413. */
import { describe, expect, it } from "bun:test";
import { BodyProblem, bodyLimit, MIB, parseBody, StreamedBody } from "../../../src/http/body";

const req = (path: string, body: BodyInit, type = "application/json", headers: Record<string, string> = {}) =>
  new Request(`http://x${path}`, { method: "POST", body, headers: { "content-type": type, ...headers } });

describe("body limits", () => {
  it("are 1 MiB by default, 32 MiB for upload-restore and 256 KiB for certificates", () => {
    expect(bodyLimit("/api/users")).toBe(MIB);
    expect(bodyLimit("/api/apps/blog/backups/upload-restore")).toBe(32 * MIB);
    expect(bodyLimit("/api/apps/blog/certs/blog.example.com")).toBe(256 * 1024);
    expect(bodyLimit("/api/apps/blog/backups/upload-restore/extra")).toBe(MIB);
  });

  it("refuse a certificate upload over 256 KiB and accept one under it", async () => {
    const over = await parseBody(
      req("/api/apps/a/certs/a.example", "x".repeat(256 * 1024 + 1), "text/plain"),
      "text/plain",
      "/api/apps/a/certs/a.example",
    );
    expect(over).toBeInstanceOf(BodyProblem);
    expect((over as BodyProblem).status).toBe(413);
    const under = await parseBody(
      req("/api/apps/a/certs/a.example", "x".repeat(200 * 1024), "text/plain"),
      "text/plain",
      "/api/apps/a/certs/a.example",
    );
    expect(typeof under).toBe("string");
  });

  it("leave an upload-restore body unread for its route to stream, but refuse a declared 33 MiB", async () => {
    const path = "/api/apps/a/backups/upload-restore";
    const fd = new FormData();
    fd.append("strategy", "volume");
    fd.append("file", new Blob([new Uint8Array(2 * MIB)]), "backup.tar");
    const ok = await new Request(`http://x${path}`, { method: "POST", body: fd });
    const parsed = await parseBody(ok, ok.headers.get("content-type")!, path);
    expect(parsed).toBeInstanceOf(StreamedBody);
    expect(ok.bodyUsed).toBe(false);
    const big = await parseBody(
      req(path, new Uint8Array(33 * MIB), "application/octet-stream", { "content-length": String(33 * MIB) }),
      "application/octet-stream",
      path,
    );
    expect((big as BodyProblem).status).toBe(413);
  });

  it("trust neither a missing nor a lying Content-Length", async () => {
    const lying = await parseBody(
      req("/api/users", "x".repeat(2 * MIB), "text/plain", { "content-length": "10" }),
      "text/plain",
      "/api/users",
    );
    expect((lying as BodyProblem).status ?? 0).toBe(413);
  });

  it("turn malformed JSON and unknown types into problems rather than throwing", async () => {
    expect(await parseBody(req("/api/users", "{nope"), "application/json", "/api/users")).toEqual(
      new BodyProblem(400, "malformed JSON"),
    );
    expect(await parseBody(req("/api/users", ""), "application/json", "/api/users")).toEqual(
      new BodyProblem(400, "request body is empty"),
    );
    expect(await parseBody(req("/api/users", "<a/>", "application/xml"), "application/xml", "/api/users")).toEqual(
      new BodyProblem(415),
    );
    expect(await parseBody(req("/api/users", new Uint8Array([0xff, 0xfe])), "application/json", "/api/users")).toEqual(
      new BodyProblem(400, "malformed JSON"),
    );
  });

  it("hand the git webhook its exact bytes, unparsed", async () => {
    const bytes = '{"ref":"refs/heads/main", "x": 1}';
    const got = await parseBody(req("/api/git/webhook", bytes), "application/json", "/api/git/webhook");
    expect(got).toBeInstanceOf(Uint8Array);
    expect(new TextDecoder().decode(got as Uint8Array)).toBe(bytes);
  });
});
