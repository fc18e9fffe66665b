/**
 * Archive calls of the Engine API, streaming: a path of a container read or written as a tar stream
 * (`GET`/`PUT /containers/{id}/archive`, no tools needed inside the image).
 */
import { messageOf, rawGet } from "./raw-http";
import type { EngineTransport } from "./transport";
import { EngineError } from "./types";

/** A tar stream of `path` in the container (its last component is the top entry, as `docker cp` does). */
export async function getArchive(
  http: EngineTransport,
  id: string,
  path: string,
  signal?: AbortSignal,
): Promise<ReadableStream<Uint8Array>> {
  // not fetch: see raw-http.ts (Bun's fetch reads these chunked bodies 10x slower than the socket delivers them)
  return rawGet(http, `/containers/${encodeURIComponent(id)}/archive?${new URLSearchParams({ path })}`, signal);
}

/** Extract a tar stream into `path`, an existing directory of the container (running or stopped). */
export async function putArchive(
  http: EngineTransport,
  id: string,
  path: string,
  tar: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): Promise<void> {
  const qs = new URLSearchParams({ path, noOverwriteDirNonDir: "false" });
  const url = `${http.target.baseUrl}/v${await http.apiVersion()}/containers/${encodeURIComponent(id)}/archive?${qs}`;
  const init: RequestInit & { unix?: string; timeout?: boolean } = {
    method: "PUT",
    body: tar,
    headers: { "content-type": "application/x-tar" },
    signal,
    timeout: false,
  };
  if (http.target.socketPath) init.unix = http.target.socketPath;
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch (e) {
    throw http.connectionError(e, signal);
  }
  const text = await res.text();
  if (!res.ok) throw new EngineError(res.status, messageOf(text) || `PUT archive ${path} answered ${res.status}`);
}
