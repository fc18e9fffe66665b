/** Redaction hides secrets at any depth and leaves its input alone; registry snapshots keep only name and host. */
import { describe, expect, it } from "bun:test";
import { REDACTED, redact, registrySnapshot } from "../../../src/lib/redact";

describe("redact", () => {
  it.each([
    "password",
    "secret",
    "token",
    "api_key",
    "apiKey",
    "https_token",
    "webhook_secret",
    "private_key",
    "privateKey",
    "key",
    "passphrase",
    "key_hash",
    "credentials",
    "master_secret",
    "PASSWORD",
  ])("replaces the value of a field named %s", (name) => {
    expect(redact({ [name]: "s3cr3t" })).toEqual({ [name]: REDACTED });
  });

  it("replaces secret values of any type, not only strings", () => {
    expect(redact<unknown>({ token: 12345, credentials: { user: "a", pass: "b" }, secret: ["a", "b"] })).toEqual({
      token: REDACTED,
      credentials: REDACTED,
      secret: REDACTED,
    });
  });

  it("leaves fields that do not name a secret untouched", () => {
    const value = {
      name: "ghcr",
      username: "alice",
      host: "ghcr.io",
      ssh_key_path: "/root/.ssh/id_ed25519",
      keys_count: 3,
      monkey: "banana",
      enabled: true,
      port: 5432,
    };
    expect(redact(value)).toEqual(value);
  });

  it("redacts at any depth", () => {
    const out = redact({ git_sync: { remote: "https://example.com/r.git", https_token: "ghp_x", nested: { password: "p" } } });
    expect(out).toEqual({
      git_sync: { remote: "https://example.com/r.git", https_token: REDACTED, nested: { password: REDACTED } },
    });
  });

  it("redacts inside arrays of objects", () => {
    const out = redact({
      registries: [
        { name: "a", password: "pa" },
        { name: "b", password: "pb" },
      ],
    });
    expect(out).toEqual({
      registries: [
        { name: "a", password: REDACTED },
        { name: "b", password: REDACTED },
      ],
    });
  });

  it("redacts objects inside a top-level array", () => {
    expect(redact([{ webhook_secret: "w" }, { url: "https://hooks" }])).toEqual([
      { webhook_secret: REDACTED },
      { url: "https://hooks" },
    ]);
  });

  it("leaves null, undefined and empty secret values as they are, so absence stays visible", () => {
    expect(redact({ password: null, token: "", secret: undefined })).toEqual({ password: null, token: "", secret: undefined });
  });

  it("passes scalars and null through", () => {
    expect(redact("text")).toBe("text");
    expect(redact(42)).toBe(42);
    expect(redact(null)).toBeNull();
  });

  it("never writes a secret value anywhere in the serialised result", () => {
    const value = { a: [{ b: { c: [{ private_key: "-----BEGIN KEY-----" }] } }], api_key: "sd_0123" };
    const text = JSON.stringify(redact(value));
    expect(text).not.toContain("BEGIN KEY");
    expect(text).not.toContain("sd_0123");
  });

  it("does not modify its input", () => {
    const value = { user: { password: "p" } };
    redact(value);
    expect(value.user.password).toBe("p");
  });
});

describe("registrySnapshot", () => {
  it("keeps only the name and host of a URL with scheme, credentials and path", () => {
    expect(
      registrySnapshot({ name: "private", url: "https://bob:hunter2@registry.example.com/v2/library?x=1" } as {
        name: string;
        url: string;
      }),
    ).toEqual({ name: "private", host: "registry.example.com" });
  });

  it("keeps a port as part of the host", () => {
    expect(registrySnapshot({ name: "r", url: "http://registry.local:5000/v2/" })).toEqual({
      name: "r",
      host: "registry.local:5000",
    });
  });

  it("reads a URL without a scheme", () => {
    expect(registrySnapshot({ name: "ghcr", url: "ghcr.io/acme/images" })).toEqual({ name: "ghcr", host: "ghcr.io" });
    expect(registrySnapshot({ name: "hub", url: "user:pw@docker.io/library" })).toEqual({ name: "hub", host: "docker.io" });
  });

  it("prefers an explicit host", () => {
    expect(registrySnapshot({ name: "r", host: "quay.io", url: "https://other.example/x" })).toEqual({
      name: "r",
      host: "quay.io",
    });
  });

  it("drops every other field, including the password", () => {
    const r = { name: "r", url: "https://quay.io", username: "alice", password: "pw" };
    const snap = registrySnapshot(r);
    expect(Object.keys(snap).sort()).toEqual(["host", "name"]);
    expect(JSON.stringify(snap)).not.toContain("pw");
    expect(JSON.stringify(snap)).not.toContain("alice");
  });
});
