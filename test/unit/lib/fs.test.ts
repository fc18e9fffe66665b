/** Atomic file writes are complete, private by default and leave no temporary file; private directories are 0700. */
import { describe, expect, it } from "bun:test";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensurePrivateDir, writeFileAtomic } from "../../../src/lib/fs";
import { tempDir } from "../../helpers/tmp";

const mode = (p: string) => statSync(p).mode & 0o777;

describe("writeFileAtomic", () => {
  it("writes the content", () => {
    const file = join(tempDir(), "config.yaml");
    writeFileAtomic(file, "listen_addr: :443\n");
    expect(readFileSync(file, "utf8")).toBe("listen_addr: :443\n");
  });

  it("writes bytes as they are", () => {
    const file = join(tempDir(), "blob");
    const data = new Uint8Array([0, 1, 2, 254, 255]);
    writeFileAtomic(file, data);
    expect(new Uint8Array(readFileSync(file))).toEqual(data);
  });

  it("creates the file private (0600) by default", () => {
    const file = join(tempDir(), "secret");
    writeFileAtomic(file, "s");
    expect(mode(file)).toBe(0o600);
  });

  it("honours an explicit mode", () => {
    const file = join(tempDir(), "public");
    writeFileAtomic(file, "p", 0o640);
    expect(mode(file)).toBe(0o640);
  });

  it("replaces an existing file and gives it the requested mode", () => {
    const dir = tempDir();
    const file = join(dir, "config.yaml");
    writeFileSync(file, "old content that is longer than the new one\n", { mode: 0o644 });
    writeFileAtomic(file, "new\n", 0o600);
    expect(readFileSync(file, "utf8")).toBe("new\n");
    expect(mode(file)).toBe(0o600);
  });

  it("leaves no temporary file behind", () => {
    const dir = tempDir();
    writeFileAtomic(join(dir, "a"), "1");
    writeFileAtomic(join(dir, "a"), "2");
    writeFileAtomic(join(dir, "b"), "3");
    expect(readdirSync(dir).sort()).toEqual(["a", "b"]);
  });

  it("leaves no temporary file behind when the rename fails", () => {
    const dir = tempDir();
    const target = join(dir, "is-a-dir");
    ensurePrivateDir(join(target, "child"));
    expect(() => writeFileAtomic(target, "x")).toThrow();
    expect(readdirSync(dir)).toEqual(["is-a-dir"]);
  });

  it("creates missing parent directories as private", () => {
    const dir = tempDir();
    const file = join(dir, "data", "nested", "master_secret");
    writeFileAtomic(file, "s");
    expect(readFileSync(file, "utf8")).toBe("s");
    expect(mode(join(dir, "data"))).toBe(0o700);
  });

  it("writes a large file completely", () => {
    const file = join(tempDir(), "big");
    const text = "0123456789abcdef".repeat(256 * 1024);
    writeFileAtomic(file, text);
    expect(readFileSync(file, "utf8")).toBe(text);
  });
});

describe("ensurePrivateDir", () => {
  it("creates a directory with mode 0700 and accepts an existing one", () => {
    const dir = join(tempDir(), "d");
    ensurePrivateDir(dir);
    ensurePrivateDir(dir);
    expect(mode(dir)).toBe(0o700);
  });
});
