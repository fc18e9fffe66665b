/**
 * The HTTP client isomorphic-git calls, on Bun's fetch: every request has a deadline (a hung remote must not hold the
 * repository lock forever), and redirects are followed only within the same origin, so a token is never sent to
 * another host.
 */
import type { HttpClient } from "isomorphic-git";
import { GitSyncError } from "./errors";

const MAX_REDIRECTS = 5;

/** An isomorphic-git HTTP client whose requests fail after `timeoutMs`. */
export function timedHttp(timeoutMs: number, where: string): HttpClient {
  return {
    async request({ url, method = "GET", headers = {}, body }) {
      let payload: Uint8Array<ArrayBuffer> | undefined;
      if (body) {
        const parts: Uint8Array[] = [];
        for await (const chunk of body as AsyncIterable<Uint8Array>) parts.push(chunk);
        payload = new Uint8Array(Buffer.concat(parts));
      }
      const signal = AbortSignal.timeout(timeoutMs);
      let target = url;
      for (let hop = 0; ; hop++) {
        let res: Response;
        try {
          res = await fetch(target, { method, headers, body: payload, signal, redirect: "manual" });
        } catch (e) {
          if ((e as Error).name === "TimeoutError" || (e as Error).name === "AbortError")
            throw new GitSyncError("timeout", `${where} did not answer within ${Math.round(timeoutMs / 1000)} s`);
          throw e;
        }
        const location = res.headers.get("location");
        if (res.status >= 300 && res.status < 400 && location) {
          const next = new URL(location, target);
          if (next.origin !== new URL(target).origin || hop >= MAX_REDIRECTS)
            throw new GitSyncError("failed", `the remote ${where} redirects to ${next.host}: set the remote to the final URL`);
          target = next.toString();
          continue;
        }
        return {
          url: target,
          method,
          statusCode: res.status,
          statusMessage: res.statusText,
          headers: Object.fromEntries(res.headers),
          body: res.body ? chunks(res.body) : undefined,
        };
      }
    },
  };
}

async function* chunks(stream: ReadableStream<Uint8Array>): AsyncIterableIterator<Uint8Array> {
  for await (const c of stream) yield c;
}
