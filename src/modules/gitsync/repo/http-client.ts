/**
 * HTTP for git remotes, on Bun's fetch: every request has a deadline (a hung remote must not hold the repository lock
 * forever), redirects are followed only within the same origin (a token is never sent to another host), and every
 * response body is capped while it streams. Our own upload-pack and receive-pack clients call it.
 */
import { GitSyncError } from "./errors";

const MAX_REDIRECTS = 5;

/** One answer: status, headers, and the body as chunks that fail past the cap. */
export interface HttpAnswer {
  url: string;
  status: number;
  statusText: string;
  headers: Headers;
  body: AsyncIterable<Uint8Array>;
}

/** A request to a git remote with a deadline, same-origin redirects and a capped body. */
export async function httpCall(o: {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: Uint8Array;
  timeoutMs: number;
  maxBytes: number;
  where: string;
}): Promise<HttpAnswer> {
  const method = o.method ?? "GET";
  const signal = AbortSignal.timeout(Math.max(1, o.timeoutMs));
  const timeout = () => new GitSyncError("timeout", `${o.where} did not answer within ${Math.round(o.timeoutMs / 1000)} s`);
  let target = o.url;
  for (let hop = 0; ; hop++) {
    let res: Response;
    try {
      res = await fetch(target, { method, headers: o.headers, body: o.body as BodyInit | undefined, signal, redirect: "manual" });
    } catch (e) {
      if ((e as Error).name === "TimeoutError" || (e as Error).name === "AbortError") throw timeout();
      throw e;
    }
    const location = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && location) {
      const next = new URL(location, target);
      if (next.origin !== new URL(target).origin || hop >= MAX_REDIRECTS)
        throw new GitSyncError("failed", `the remote ${o.where} redirects to ${next.host}: set the remote to the final URL`);
      target = next.toString();
      continue;
    }
    return {
      url: target,
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
      body: capped(res.body, o.maxBytes, o.where, timeout),
    };
  }
}

async function* capped(
  stream: ReadableStream<Uint8Array> | null,
  max: number,
  where: string,
  timeout: () => GitSyncError,
): AsyncIterableIterator<Uint8Array> {
  if (!stream) return;
  let n = 0;
  const reader = stream.getReader();
  try {
    for (;;) {
      let r: Awaited<ReturnType<typeof reader.read>>;
      try {
        r = await reader.read();
      } catch (e) {
        if ((e as Error).name === "TimeoutError" || (e as Error).name === "AbortError") throw timeout();
        throw e;
      }
      if (r.done) return;
      n += r.value.length;
      if (n > max) throw new GitSyncError("failed", `the remote ${where} sent an answer larger than ${max} bytes`);
      yield r.value;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
