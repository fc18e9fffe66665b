/**
 * Upload-restore's streaming multipart reader against bodies the platform's own FormData encoder makes: the file part
 * lands on disk byte for byte (0600) whatever the chunking, text fields come back, and a body past the limit, a
 * malformed body or one without a file are refused.
 */
import { describe, expect, it } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { HttpError } from "../../../../src/lib/errors";
import { spoolMultipart } from "../../../../src/modules/backups/upload";
import { tempDir } from "../../../helpers/tmp";

/** A multipart body as fetch would send it, and its content type. */
async function encode(fields: Record<string, string>, file?: Uint8Array) {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) fd.set(k, v);
  if (file) fd.set("file", new Blob([file as BlobPart]), "backup.tar.gz");
  const req = new Request("http://x/", { method: "POST", body: fd });
  return { type: req.headers.get("content-type")!, bytes: new Uint8Array(await req.arrayBuffer()) };
}

/** The bytes as a stream of `size`-byte chunks. */
const chunked = (b: Uint8Array, size: number) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < b.length; i += size) c.enqueue(b.slice(i, i + size));
      c.close();
    },
  });

describe("the upload reader", () => {
  const file = crypto.getRandomValues(new Uint8Array(200_000));
  // a file holding what looks like a boundary start and CRLFs must come through untouched
  file.set(new TextEncoder().encode("\r\n--\r\n----WebKitFormBoundary\r\n"), 1000);

  for (const size of [1, 7, 70, 4096, 1 << 20]) {
    it(`writes the file byte for byte and returns the fields, in chunks of ${size}`, async () => {
      // tiny chunks on a smaller file: one write per byte is slow, not wrong
      const f = size < 64 ? file.subarray(0, 4000) : file;
      const { type, bytes } = await encode({ strategy: "volume", container: "web-1" }, f);
      const dest = join(tempDir(), "upload.bin");
      const r = await spoolMultipart(chunked(bytes, size), type, dest, 32 << 20);
      expect(r).toEqual({ fields: { strategy: "volume", container: "web-1" }, fileBytes: f.length });
      expect(new Uint8Array(readFileSync(dest))).toEqual(f);
      expect(statSync(dest).mode & 0o777).toBe(0o600);
    });
  }

  it("answers 413 once the body passes the limit, however it is chunked", async () => {
    const { type, bytes } = await encode({ strategy: "volume" }, file);
    const dest = join(tempDir(), "upload.bin");
    const e = await spoolMultipart(chunked(bytes, 4096), type, dest, 100_000).catch((x) => x);
    expect(e).toBeInstanceOf(HttpError);
    expect((e as HttpError).status).toBe(413);
  });

  it("refuses a body cut short, a wrong content type, and reports a body without a file", async () => {
    const { type, bytes } = await encode({ strategy: "volume" }, file);
    const cut = await spoolMultipart(
      chunked(bytes.subarray(0, bytes.length - 10), 4096),
      type,
      join(tempDir(), "a"),
      1 << 30,
    ).catch((x) => x);
    expect((cut as HttpError).reason).toBe("malformed multipart body");
    const wrong = await spoolMultipart(chunked(bytes, 4096), "application/json", join(tempDir(), "b"), 1 << 30).catch((x) => x);
    expect((wrong as HttpError).status).toBe(400);
    const noFile = await encode({ strategy: "volume" });
    const dest = join(tempDir(), "c");
    expect(await spoolMultipart(chunked(noFile.bytes, 10), noFile.type, dest, 1 << 30)).toEqual({
      fields: { strategy: "volume" },
      fileBytes: null,
    });
    expect(existsSync(dest)).toBe(false);
  });
});
