/**
 * A real S3 server for tests: npm `s3rver` run by Bun as a child process (so its memory is not the test's) on a free
 * port, storing in a temp dir, with one bucket made at startup. Its request log tells a test which S3 calls were made.
 * s3rver accepts only the access key `S3RVER` and never checks secret keys.
 */
import { join, resolve } from "node:path";
import { until } from "./http";
import { freePort } from "./pebble";
import { tempDir } from "./tmp";

const BIN = resolve(import.meta.dir, "../../node_modules/s3rver/bin/s3rver.js");

export interface S3Server {
  endpoint: string;
  bucket: string;
  accessKey: string;
  secretKey: string;
  /** Where s3rver keeps buckets (`<dir>/<bucket>/<key>._S3rver_object`, uploads under `<bucket>/._S3rver_uploads`). */
  dir: string;
  /** The request log so far, colour codes removed, one line per request or store event. */
  log(): string[];
  stop(): Promise<void>;
}

/**
 * Start s3rver with `bucket` created. With `vhost`, it also answers virtual-hosted requests to
 * `<bucket>.s3.localhost` (Bun resolves `*.localhost` to loopback): use the endpoint `http://s3.localhost:<port>`.
 */
export async function startS3(bucket = "backups", opts: { vhost?: boolean } = {}): Promise<S3Server> {
  const dir = tempDir("sundeck-s3rver-");
  const port = await freePort();
  const proc = Bun.spawn(
    [
      process.execPath,
      BIN,
      "-d",
      dir,
      "-a",
      "127.0.0.1",
      "-p",
      String(port),
      "--configure-bucket",
      bucket,
      ...(opts.vhost ? ["--service-endpoint", "localhost"] : []),
    ],
    {
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  let text = "";
  const drain = async (s: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    for await (const chunk of s) text += dec.decode(chunk, { stream: true });
  };
  void drain(proc.stdout);
  void drain(proc.stderr);
  try {
    await until(() => text.includes("S3rver listening"), { timeout: 10_000, what: `s3rver on ${port}` });
  } catch (e) {
    proc.kill();
    throw new Error(`${(e as Error).message}\n${text}`);
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    accessKey: "S3RVER",
    secretKey: "S3RVER",
    dir,
    log: () =>
      text
        .replace(/\u001b\[[0-9;]*m/g, "")
        .split("\n")
        .filter(Boolean),
    stop: async () => {
      proc.kill();
      await proc.exited;
    },
  };
}

/** The path s3rver stores an object's bytes at. */
export function s3ObjectPath(s: S3Server, objectKey: string): string {
  return join(s.dir, s.bucket, `${objectKey}._S3rver_object`);
}
