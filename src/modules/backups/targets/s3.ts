/**
 * The S3 target through Bun.S3Client: a put streams into a multipart upload (parts of `partSize`, at most `queueSize`
 * in flight, so memory stays near their product) while hashing and counting. A source error or a cancel aborts the
 * upload; Bun's `writer().end(err)` would complete it instead, so the stream goes through `S3File.write`.
 */
import { randomBytes } from "node:crypto";
import type { Resolver } from "../../webhooks/safe-http";
import type { OpControl, Stored, Target } from "../types";
import { checkKey, TargetError } from "./keys";
import { abortError, meter } from "./meter";
import { checkEndpointAddresses, type S3TargetConfig, s3Origin } from "./s3-config";

/** Tuning of {@link createS3Target}; the defaults suit archives up to ~78 GiB (10,000 parts). */
export interface S3TargetOptions {
  /** Bytes per multipart part (S3's minimum is 5 MiB); default 8 MiB. */
  partSize?: number;
  /** Parts uploaded at once; default 2. */
  queueSize?: number;
  /** Retries of a failed part; default 3. */
  retry?: number;
  /** How long test() waits for the server before it gives up (ms); default 15 s. */
  testTimeoutMs?: number;
  progressEveryMs?: number;
  /** Resolves the endpoint's name before each request, for the address policy (default: the system resolver). */
  resolve?: Resolver;
}

/** The S3 target, with the full object key of an archive key (for logs and tests). */
export interface S3Target extends Target {
  kind: "s3";
  /** The object key in the bucket: the prefix and the archive key. */
  objectKey(key: string): string;
  /** A GET URL for the object, valid `expiresInS` seconds. */
  presign(key: string, expiresInS: number): string;
}

const MiB = 1024 * 1024;
const PROBE = "sundeck probe\n";

/** Store archives as objects under `config.prefix` in `config.bucket` (config from {@link parseS3Config}). */
export function createS3Target(config: S3TargetConfig, opts: S3TargetOptions = {}): S3Target {
  const client = new Bun.S3Client({
    // virtual-hosted style: Bun takes the bucket from the endpoint's host and ignores `bucket`
    endpoint: s3Origin(config),
    bucket: config.bucket,
    region: config.region,
    accessKeyId: config.accessKey,
    secretAccessKey: config.secretKey,
    virtualHostedStyle: !config.pathStyle,
  });
  const upload = { partSize: opts.partSize ?? 8 * MiB, queueSize: opts.queueSize ?? 2, retry: opts.retry ?? 3 };
  const objectKey = (key: string) => config.prefix + checkKey(key);
  const where = `bucket ${JSON.stringify(config.bucket)} at ${config.endpoint}`;
  /**
   * The endpoint's addresses judged before each request (the name may resolve elsewhere than when it was stored):
   * Bun.S3Client dials by name and follows redirects, so this is the check there is; the endpoint is set by admins.
   */
  const guard = () => checkEndpointAddresses(s3Origin(config), opts.resolve);
  /** Describe an S3 failure: the step, the S3 code and message, never the credentials. */
  const fail = (step: string, e: unknown) => {
    const code = (e as { code?: string })?.code;
    const msg = describe(code, (e as Error)?.message ?? String(e), config);
    return new TargetError(scrub(`s3 ${step} failed (${where}): ${code ? `${code}: ` : ""}${msg}`, config.secretKey), code);
  };

  async function put(key: string, data: ReadableStream<Uint8Array>, ctl: OpControl): Promise<Stored> {
    let full: string;
    try {
      full = objectKey(key);
    } catch (e) {
      await data.cancel(e).catch(() => {});
      throw e;
    }
    try {
      await guard();
    } catch (e) {
      await data.cancel(e).catch(() => {});
      throw e;
    }
    const m = meter(data, ctl, { everyMs: opts.progressEveryMs });
    try {
      await client.file(full).write(new Response(m.stream), upload);
    } catch (e) {
      await m.stop(e);
      await removeLeftover(full);
      if (ctl.signal?.aborted) throw abortError(ctl.signal);
      // the source's own error (a dump that broke) says more than the upload it broke
      throw (e as { name?: string })?.name === "S3Error" ? fail(`upload of ${full}`, e) : e;
    }
    if (ctl.signal?.aborted) {
      await removeLeftover(full);
      throw abortError(ctl.signal);
    }
    const stored = await client.stat(full).catch((e) => {
      throw fail(`stat of ${full} after upload`, e);
    });
    if (stored.size !== m.bytes()) {
      await removeLeftover(full);
      throw new TargetError(`s3 upload of ${full} stored ${stored.size} bytes of ${m.bytes()} (${where})`);
    }
    return { key, sizeBytes: m.bytes(), sha256: m.sha256() };
  }

  /**
   * After a failed put nothing may stay under the key: the upload was aborted; delete what a server kept anyway
   * (a run's key is new to the bucket, so whatever is there came from this put).
   */
  async function removeLeftover(full: string): Promise<void> {
    try {
      if (await client.exists(full)) await client.delete(full);
    } catch {
      // unreachable server: nothing was completed there either
    }
  }

  async function get(key: string): Promise<ReadableStream<Uint8Array>> {
    const full = objectKey(key);
    await guard();
    await client.stat(full).catch((e) => {
      throw fail(`read of ${full}`, e);
    });
    return client.file(full).stream();
  }

  async function del(key: string): Promise<void> {
    const full = objectKey(key);
    await guard();
    try {
      await client.delete(full);
    } catch (e) {
      if ((e as { code?: string })?.code !== "NoSuchKey") throw fail(`delete of ${full}`, e);
    }
  }

  function presign(key: string, expiresInS: number): string {
    return client.presign(objectKey(key), { method: "GET", expiresIn: Math.max(1, Math.floor(expiresInS)) });
  }

  async function test(): Promise<void> {
    const probe = `${config.prefix}.sundeck-probe-${randomBytes(6).toString("hex")}`;
    const steps = async () => {
      await guard();
      await client.write(probe, PROBE).catch((e) => {
        throw fail("write of a probe object", e);
      });
      try {
        const st = await client.stat(probe).catch((e) => {
          throw fail("stat of the probe object", e);
        });
        if (st.size !== PROBE.length)
          throw new TargetError(`s3 probe object reads back ${st.size} bytes of ${PROBE.length} (${where})`);
        const back = await client
          .file(probe)
          .text()
          .catch((e) => {
            throw fail("read of the probe object", e);
          });
        if (back !== PROBE) throw new TargetError(`s3 probe object reads back other bytes than written (${where})`);
      } finally {
        await client.delete(probe).catch((e) => {
          throw fail("delete of the probe object", e);
        });
      }
    };
    const limit = opts.testTimeoutMs ?? 15_000;
    let timer: Timer | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new TargetError(`s3 server did not answer within ${limit / 1000} s (${where})`, "Timeout")),
        limit,
      );
    });
    try {
      await Promise.race([steps(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  return { kind: "s3", put, get, delete: del, presign, test, objectKey };
}

/** A plainer message for the S3 codes a person meets when setting up a target. */
function describe(code: string | undefined, message: string, c: S3TargetConfig): string {
  switch (code) {
    case "ConnectionRefused":
      return `cannot connect to ${c.endpoint} (connection refused)`;
    case "ConnectionClosed":
      return `the connection to ${c.endpoint} closed mid-request`;
    case "NoSuchBucket":
      return `bucket ${JSON.stringify(c.bucket)} does not exist`;
    case "InvalidAccessKeyId":
    case "SignatureDoesNotMatch":
    case "AccessDenied":
      return `access denied: ${oneLine(message)}`;
    case "UnknownError":
      // not an S3 error document: whatever answered is not (only) an S3 server, and its body is not repeated
      return "the server's answer is not an S3 answer";
    default:
      return oneLine(message);
  }
}

/** A server's message on one line, at most 200 characters. */
function oneLine(text: string): string {
  const s = text.replace(/[\0-\x1f\x7f]+/g, " ").trim();
  return s.length > 200 ? `${s.slice(0, 200)}…` : s;
}

/** Belt and braces: an error text never carries the secret key, whatever a server echoed. */
function scrub(text: string, secret: string): string {
  return secret.length >= 4 ? text.split(secret).join("********") : text;
}
