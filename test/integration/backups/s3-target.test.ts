/**
 * The S3 target against a real S3 server (s3rver): streamed multipart puts with sha256 and size, aborted uploads that
 * leave nothing, presigned downloads by plain fetch, the connection test passing and failing with clear messages.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync } from "node:fs";
import { createS3Target, type S3TargetOptions } from "../../../src/modules/backups/targets/s3";
import { parseS3Config, type S3TargetConfig } from "../../../src/modules/backups/targets/s3-config";
import { digestOf, generatedBody } from "../../helpers/bodies";
import { freePort } from "../../helpers/pebble";
import { type S3Server, s3ObjectPath, startS3 } from "../../helpers/s3";

const MiB = 1024 * 1024;
let s3: S3Server;

beforeAll(async () => {
  s3 = await startS3("backups");
});
afterAll(async () => {
  await s3?.stop();
});

function config(over: Partial<S3TargetConfig> = {}): S3TargetConfig {
  return parseS3Config({
    endpoint: s3.endpoint,
    bucket: s3.bucket,
    prefix: "/sundeck",
    region: "",
    accessKey: s3.accessKey,
    secretKey: "a-very-secret-key",
    ...over,
  });
}
/** The error a promise rejects with (an Error saying it passed when it did not reject). */
const failure = (p: Promise<unknown>) =>
  p.then(
    () => new Error("it passed"),
    (e: Error) => e,
  );

/** A plain client on the test bucket, to look at what the target left. */
const client = () =>
  new Bun.S3Client({ endpoint: s3.endpoint, bucket: s3.bucket, accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey });
const target = (over: Partial<S3TargetConfig> = {}, opts: S3TargetOptions = {}) => createS3Target(config(over), opts);

/** Log lines of requests on one object key made after line `from`. */
const requestsFor = (name: string, from = 0) =>
  s3
    .log()
    .slice(from)
    .filter((l) => l.includes(name));

describe("s3 target", () => {
  it("streams a 50 MiB body as a multipart upload under the prefix, with its sha256 and size", async () => {
    const t = target({}, { partSize: 8 * MiB });
    const body = generatedBody(50 * MiB);
    const seen: number[] = [];
    const stored = await t.put("shop/db/20261127T032809Z-1.pgdump.gz", body.stream, { progress: (b) => seen.push(b) });
    expect(stored).toEqual({ key: "shop/db/20261127T032809Z-1.pgdump.gz", sizeBytes: 50 * MiB, sha256: body.sha256() });
    expect(seen.at(-1)).toBe(50 * MiB);
    expect(existsSync(s3ObjectPath(s3, "sundeck/shop/db/20261127T032809Z-1.pgdump.gz"))).toBe(true);
    // 50 MiB in 8 MiB parts: 7 parts stored under one multipart upload
    const parts = requestsFor("20261127T032809Z-1.pgdump.gz?partNumber=");
    expect(parts.length).toBe(7);
    expect(await digestOf(await t.get(stored.key))).toEqual({ sha256: body.sha256(), size: 50 * MiB });
  });

  it("aborts the upload when the stream errors half-way and leaves no object", async () => {
    const t = target({}, { partSize: 5 * MiB });
    const mark = s3.log().length;
    const body = generatedBody(20 * MiB, { failAt: 12 * MiB });
    await expect(t.put("app/svc/broken.tar.gz", body.stream, {})).rejects.toThrow("source broke half-way");
    expect(await client().exists("sundeck/app/svc/broken.tar.gz")).toBe(false);
    expect(existsSync(s3ObjectPath(s3, "sundeck/app/svc/broken.tar.gz"))).toBe(false);
    // parts went up, then AbortMultipartUpload was sent (s3rver 3.7 answers it 405: it does not implement it)
    const lines = requestsFor("broken.tar.gz", mark);
    expect(lines.some((l) => l.includes("partNumber=1"))).toBe(true);
    expect(lines.some((l) => /broken\.tar\.gz\?uploadId=\w+ 405/.test(l))).toBe(true);
    expect(lines.some((l) => l.includes("Stored object"))).toBe(false);
  });

  it("aborts the upload when the signal fires and leaves no object", async () => {
    const t = target({}, { partSize: 5 * MiB });
    const ac = new AbortController();
    let cancelled: unknown;
    let sent = 0;
    const src = new ReadableStream<Uint8Array>({
      pull(c) {
        sent += MiB;
        c.enqueue(new Uint8Array(MiB));
        if (sent === 11 * MiB) ac.abort(new Error("backup cancelled by a user"));
      },
      cancel(r) {
        cancelled = r;
      },
    });
    await expect(t.put("app/svc/cancelled.tar.gz", src, { signal: ac.signal })).rejects.toThrow("backup cancelled by a user");
    expect(cancelled).toBeInstanceOf(Error);
    expect(existsSync(s3ObjectPath(s3, "sundeck/app/svc/cancelled.tar.gz"))).toBe(false);
    await expect(t.get("app/svc/cancelled.tar.gz")).rejects.toThrow("NoSuchKey");
  });

  it("aborts a small upload (under one part) that breaks, sending nothing", async () => {
    const t = target();
    const mark = s3.log().length;
    await expect(t.put("app/svc/small.gz", generatedBody(MiB, { failAt: 512 * 1024 }).stream, {})).rejects.toThrow(
      "source broke half-way",
    );
    expect(requestsFor("small.gz", mark).filter((l) => l.includes("Stored object"))).toEqual([]);
    expect(existsSync(s3ObjectPath(s3, "sundeck/app/svc/small.gz"))).toBe(false);
  });

  it("gives a presigned URL that plain fetch downloads", async () => {
    const t = target();
    const body = generatedBody(3 * MiB);
    await t.put("app/svc/dl.tar.gz", body.stream, {});
    const url = t.presign("app/svc/dl.tar.gz", 300);
    expect(url).toContain("X-Amz-Expires=300");
    expect(url).not.toContain("a-very-secret-key");
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(await digestOf(res.body as ReadableStream<Uint8Array>)).toEqual({ sha256: body.sha256(), size: 3 * MiB });
  });

  it("deletes an object, and a missing one is fine", async () => {
    const t = target();
    await t.put("app/svc/gone.gz", generatedBody(10).stream, {});
    await t.delete("app/svc/gone.gz");
    await t.delete("app/svc/gone.gz");
    expect(existsSync(s3ObjectPath(s3, "sundeck/app/svc/gone.gz"))).toBe(false);
  });

  it("refuses keys that would leave the prefix", async () => {
    const t = target();
    await expect(t.put("../other/x.gz", generatedBody(10).stream, {})).rejects.toThrow("invalid backup key");
    await expect(t.get("/abs.gz")).rejects.toThrow("invalid backup key");
    expect(() => t.presign("a/../../b", 60)).toThrow("invalid backup key");
  });

  it("passes its connection test and leaves no probe", async () => {
    const mark = s3.log().length;
    await target().test();
    const key = /"(sundeck\/\.sundeck-probe-\w+)"/.exec(s3.log().slice(mark).join("\n"))?.[1];
    expect(key).toBeDefined();
    expect(await client().exists(key as string)).toBe(false);
  });

  it("fails its test naming the missing bucket", async () => {
    const err = await failure(target({ bucket: "no-such-bucket" }).test());
    expect(err.message).toBe(
      `s3 write of a probe object failed (bucket "no-such-bucket" at ${s3.endpoint}): NoSuchBucket: bucket "no-such-bucket" does not exist`,
    );
  });

  it("fails its test naming a refused access key, never showing the secret", async () => {
    const err = await failure(target({ accessKey: "WRONGKEY" }).test());
    expect(err.message).toStartWith(
      `s3 write of a probe object failed (bucket "backups" at ${s3.endpoint}): InvalidAccessKeyId: access denied:`,
    );
    expect(err.message).not.toContain("a-very-secret-key");
  });

  it("fails its test naming an endpoint nobody listens on", async () => {
    const port = await freePort();
    const err = await failure(target({ endpoint: `http://127.0.0.1:${port}` }).test());
    expect(err.message).toBe(
      `s3 write of a probe object failed (bucket "backups" at http://127.0.0.1:${port}): ConnectionRefused: cannot connect to http://127.0.0.1:${port} (connection refused)`,
    );
  });

  it("gives up its test on a server that accepts connections and never answers", async () => {
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      const endpoint = `http://127.0.0.1:${silent.port}`;
      const err = await failure(target({ endpoint }, { testTimeoutMs: 300 }).test());
      expect(err.message).toBe(`s3 server did not answer within 0.3 s (bucket "backups" at ${endpoint})`);
    } finally {
      silent.stop(true);
    }
  });

  it("fails a put naming the upload when the server goes away mid-way, and cancels the source", async () => {
    const doomed = await startS3("doomed");
    let cancelled = false;
    let sent = 0;
    const src = new ReadableStream<Uint8Array>({
      pull(c) {
        sent += MiB;
        c.enqueue(new Uint8Array(MiB));
      },
      cancel() {
        cancelled = true;
      },
    });
    let stopping: Promise<void> | undefined;
    const t = target({ endpoint: doomed.endpoint, bucket: "doomed" }, { partSize: 5 * MiB, retry: 0 });
    const err = await failure(
      t.put("app/svc/doomed.gz", src, {
        progress: (b) => {
          if (b >= 12 * MiB) stopping ??= doomed.stop();
        },
      }),
    );
    await stopping;
    expect(err.message).toStartWith(`s3 upload of sundeck/app/svc/doomed.gz failed (bucket "doomed" at ${doomed.endpoint}): `);
    expect(cancelled).toBe(true);
    // the source never ends: a bound shows it stopped being read (how far depends on how fast s3rver dies under load)
    expect(sent).toBeLessThan(256 * MiB);
  });

  it("addresses the bucket in the host name when path style is off", async () => {
    const vhost = await startS3("hosted", { vhost: true });
    try {
      const endpoint = vhost.endpoint.replace("127.0.0.1", "s3.localhost");
      const t = target({ endpoint, bucket: "hosted", pathStyle: false });
      await t.test();
      const body = generatedBody(MiB);
      await t.put("app/svc/v.gz", body.stream, {});
      expect(existsSync(s3ObjectPath(vhost, "sundeck/app/svc/v.gz"))).toBe(true);
      const url = t.presign("app/svc/v.gz", 60);
      expect(url).toStartWith(`http://hosted.s3.localhost:${new URL(endpoint).port}/sundeck/app/svc/v.gz?`);
      expect(await digestOf((await fetch(url)).body as ReadableStream<Uint8Array>)).toEqual({ sha256: body.sha256(), size: MiB });
    } finally {
      await vhost.stop();
    }
  });
});
