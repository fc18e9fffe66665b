/** The local target on the real filesystem: streamed atomic puts (0600 files, 0700 dirs), refusals, cleanup, sweep. */
import { describe, expect, it } from "bun:test";
import { mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createLocalTarget } from "../../../../../src/modules/backups/targets/local";
import { digestOf, generatedBody } from "../../../../helpers/bodies";
import { tempDir } from "../../../../helpers/tmp";

const MiB = 1024 * 1024;

/** Every file under `dir`, relative. */
function filesUnder(dir: string, rel = ""): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...filesUnder(dir, p));
    else out.push(p);
  }
  return out;
}

describe("local target", () => {
  it("streams a 50 MiB body into place with its sha256 and size, and reads it back", async () => {
    const dir = join(tempDir(), "backups");
    const t = createLocalTarget({ dir });
    const body = generatedBody(50 * MiB);
    const seen: number[] = [];
    const stored = await t.put("shop/db/20261127T032809Z-1.pgdump.gz", body.stream, { progress: (b) => seen.push(b) });
    expect(stored).toEqual({ key: "shop/db/20261127T032809Z-1.pgdump.gz", sizeBytes: 50 * MiB, sha256: body.sha256() });
    expect(await digestOf(await t.get(stored.key))).toEqual({ sha256: body.sha256(), size: 50 * MiB });
    expect(seen.at(-1)).toBe(50 * MiB);
    expect(seen.length).toBeLessThan(50 * 16);
    expect(filesUnder(dir)).toEqual(["shop/db/20261127T032809Z-1.pgdump.gz"]);
  });

  it("writes files 0600 in directories 0700", async () => {
    const dir = join(tempDir(), "backups");
    const t = createLocalTarget({ dir });
    await t.put("app/svc/a.tar.gz", generatedBody(1000).stream, {});
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, "app")).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, "app/svc")).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, "app/svc/a.tar.gz")).mode & 0o777).toBe(0o600);
  });

  it("leaves neither the key nor a temp file when the stream errors half-way", async () => {
    const dir = join(tempDir(), "backups");
    const t = createLocalTarget({ dir });
    const body = generatedBody(8 * MiB, { failAt: 4 * MiB });
    await expect(t.put("app/svc/broken.tar.gz", body.stream, {})).rejects.toThrow("source broke half-way");
    expect(body.produced()).toBe(4 * MiB);
    expect(filesUnder(dir)).toEqual([]);
  });

  it("stops, cancels the source and cleans up when the signal aborts", async () => {
    const dir = join(tempDir(), "backups");
    const t = createLocalTarget({ dir });
    const ac = new AbortController();
    let cancelled: unknown;
    let sent = 0;
    const src = new ReadableStream<Uint8Array>({
      pull(c) {
        sent += 64 * 1024;
        c.enqueue(new Uint8Array(64 * 1024));
        if (sent >= 2 * MiB) ac.abort();
      },
      cancel(r) {
        cancelled = r;
      },
    });
    await expect(t.put("app/svc/cancelled.tar.gz", src, { signal: ac.signal })).rejects.toThrow("cancelled");
    expect(cancelled).toBeInstanceOf(Error);
    expect(filesUnder(dir)).toEqual([]);
  });

  it("aborts a put whose source is waiting for data", async () => {
    const dir = join(tempDir(), "backups");
    const t = createLocalTarget({ dir });
    const ac = new AbortController();
    const src = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new Uint8Array(10));
      },
      pull() {
        return new Promise(() => {}); // a dump that hangs
      },
    });
    const put = t.put("app/svc/hung.tar.gz", src, { signal: ac.signal });
    ac.abort(new Error("backup cancelled by a user"));
    await expect(put).rejects.toThrow("backup cancelled by a user");
    expect(filesUnder(dir)).toEqual([]);
  });

  it.each([
    "/etc/passwd",
    "../escape.tar.gz",
    "app/../../escape.tar.gz",
    "app/./x.tar.gz",
    "app//x.tar.gz",
    "app/.hidden",
    "app\\..\\x",
    "app/x\u0000y",
    "app/x y",
    "",
    "app/",
  ])("refuses the key %p and touches nothing", async (key) => {
    const root = tempDir();
    const dir = join(root, "backups");
    const t = createLocalTarget({ dir });
    let cancelled = false;
    const src = new ReadableStream<Uint8Array>({
      cancel() {
        cancelled = true;
      },
    });
    await expect(t.put(key, src, {})).rejects.toThrow("invalid backup key");
    expect(cancelled).toBe(true);
    await expect(t.get(key)).rejects.toThrow("invalid backup key");
    await expect(t.delete(key)).rejects.toThrow("invalid backup key");
    expect(readdirSync(root)).toEqual([]);
  });

  it("refuses a key whose directory is a link leading out of the backup dir", async () => {
    const root = tempDir();
    const dir = join(root, "backups");
    mkdirSync(join(root, "outside"));
    mkdirSync(dir);
    symlinkSync(join(root, "outside"), join(dir, "app"));
    const t = createLocalTarget({ dir });
    await expect(t.put("app/x.tar.gz", generatedBody(10).stream, {})).rejects.toThrow("leaves");
    expect(readdirSync(join(root, "outside"))).toEqual([]);
  });

  it("deletes a file, and a missing one is fine", async () => {
    const dir = join(tempDir(), "backups");
    const t = createLocalTarget({ dir });
    await t.put("a/b.gz", generatedBody(10).stream, {});
    await t.delete("a/b.gz");
    await t.delete("a/b.gz");
    await t.delete("never/was.gz");
    expect(filesUnder(dir)).toEqual([]);
  });

  it("says a missing archive is not found", async () => {
    const t = createLocalTarget({ dir: join(tempDir(), "backups") });
    await expect(t.get("a/none.gz")).rejects.toThrow("backup file a/none.gz not found");
  });

  it("has no presigned URL (the server streams local downloads)", () => {
    expect(createLocalTarget({ dir: tempDir() }).presign("a/b.gz", 60)).toBeNull();
  });

  it("sweeps temp files a killed process left, and nothing else", async () => {
    const dir = join(tempDir(), "backups");
    const t = createLocalTarget({ dir });
    await t.put("a/keep.gz", generatedBody(10).stream, {});
    writeFileSync(join(dir, "a/.sundeck-tmp-0123456789ab"), "half");
    writeFileSync(join(dir, ".sundeck-probe-0123456789ab"), "probe");
    expect(await t.sweepTemp()).toBe(2);
    expect(filesUnder(dir)).toEqual(["a/keep.gz"]);
    expect(await createLocalTarget({ dir: join(dir, "none") }).sweepTemp()).toBe(0);
  });

  it("passes its test on a usable dir and leaves no probe", async () => {
    const dir = join(tempDir(), "backups");
    await createLocalTarget({ dir }).test();
    expect(filesUnder(dir)).toEqual([]);
  });

  it("fails its test naming the dir and the error when the dir cannot be made", async () => {
    const root = tempDir();
    writeFileSync(join(root, "file"), "");
    const dir = join(root, "file", "backups");
    await expect(createLocalTarget({ dir }).test()).rejects.toThrow(`backup dir ${dir} cannot be created: ENOTDIR`);
  });
});
