/**
 * Request bodies: per-route size limits (1 MiB, 32 MiB upload-restore, 256 KiB certificates) and parsing that never
 * throws before authentication; problems become markers the auth step turns into 400/413/415 after the 401 check.
 */

export const MIB = 1024 * 1024;

/** The body limit of a path. */
export function bodyLimit(path: string): number {
  if (/^\/api\/apps\/[^/]+\/backups\/upload-restore\/?$/.test(path)) return 32 * MIB;
  if (/^\/api\/apps\/[^/]+\/certs\//.test(path)) return 256 * 1024;
  return MIB;
}

/** Paths that receive their body as raw bytes, never parsed: signatures are computed over the exact bytes sent. */
const RAW = new Set(["/api/git/webhook"]);

/** Paths whose route reads the body itself as a stream (an upload spooled to disk, never held in memory). */
const STREAMED = /^\/api\/apps\/[^/]+\/backups\/upload-restore\/?$/;

/** What parseBody hands a STREAMED route: the body is left unread on the request, for the route to stream. */
export class StreamedBody {}

/** The largest limit of any route: what the HTTP server itself accepts before our own check. */
export const MAX_BODY = 32 * MIB;

/** A body that could not be parsed, carried to the point where it is safe to say so. */
export class BodyProblem {
  constructor(
    readonly status: 400 | 413 | 415,
    readonly reason?: string,
  ) {}
}

/** Read a body stream up to `limit` bytes; null when it is longer. */
export async function readLimited(body: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array | null> {
  if (!body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(size);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.byteLength;
  }
  return out;
}

/** Parse a request body by content type within the path's limit; problems come back as BodyProblem, never thrown. */
export async function parseBody(request: Request, contentType: string, path: string): Promise<unknown> {
  const declared = Number(request.headers.get("content-length") ?? "");
  const limit = bodyLimit(path);
  if (declared > limit) return new BodyProblem(413);
  if (STREAMED.test(path)) return new StreamedBody();
  const raw = await readLimited(request.body, limit);
  if (raw === null) return new BodyProblem(413);
  if (RAW.has(path)) return raw;
  const type = contentType.split(";")[0].trim().toLowerCase();
  if (raw.byteLength === 0) return type === "application/json" ? new BodyProblem(400, "request body is empty") : undefined;
  try {
    switch (type) {
      case "application/json":
        return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(raw));
      case "text/plain":
      case "application/yaml":
      case "application/x-yaml":
        return new TextDecoder("utf-8", { fatal: true }).decode(raw);
      case "multipart/form-data":
        // the full header: Elysia may hand over the type without its boundary parameter
        return await new Response(raw as unknown as BodyInit, {
          headers: { "content-type": request.headers.get("content-type") ?? contentType },
        }).formData();
      case "application/x-www-form-urlencoded":
        return Object.fromEntries(new URLSearchParams(new TextDecoder().decode(raw)));
      case "application/octet-stream":
        return raw;
      default:
        return new BodyProblem(415);
    }
  } catch {
    return new BodyProblem(400, type === "application/json" ? "malformed JSON" : "malformed body");
  }
}
