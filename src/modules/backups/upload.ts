/**
 * Upload-restore's multipart body read as a stream: the `file` part goes straight to a 0600 temp file (with
 * backpressure), the small text fields into memory, and the whole body is cut at its limit (413). Nothing holds the
 * archive in memory, so four concurrent 32 MiB uploads cost buffers, not 128 MiB.
 */

import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { badRequest, HttpError } from "../../lib/errors";

/** Longest a part's headers, or a text field, may be. */
const MAX_HEADERS = 8 * 1024;
const MAX_FIELD = 1024;
/** Longest the transport padding after a boundary may be. */
const MAX_PADDING = 1024;
/** Most parts a body may hold: the file, strategy, container and a few a client adds. */
const MAX_PARTS = 8;
/** The text fields kept; others are read and dropped. */
const FIELDS = new Set(["strategy", "container"]);

/**
 * Time limits of a body: it must arrive whole within `totalMs` and never pause longer than `stallMs`, so a client
 * trickling bytes cannot hold one of the few restore slots (taken before the body is read) for long.
 */
export interface SpoolLimits {
  totalMs: number;
  stallMs: number;
}

/** 32 MiB in 10 minutes is 56 KB/s; no pause of 30 s. */
export const SPOOL_LIMITS: SpoolLimits = { totalMs: 10 * 60_000, stallMs: 30_000 };

/** The boundary of a multipart/form-data content type, or a 400. */
export function boundaryOf(contentType: string): string {
  const type = contentType.split(";")[0].trim().toLowerCase();
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  if (type !== "multipart/form-data" || !m) throw badRequest("the body must be multipart/form-data with file and strategy");
  return m[1] ?? m[2];
}

/** The `name` and `filename` of a part's Content-Disposition. */
function disposition(headers: string): { name: string | null; filename: string | null } {
  const line = headers.split("\r\n").find((l) => /^content-disposition:/i.test(l)) ?? "";
  const name = /;\s*name="([^"]*)"/i.exec(line)?.[1] ?? null;
  const filename = /;\s*filename="([^"]*)"/i.exec(line)?.[1] ?? null;
  return { name, filename };
}

/**
 * Read a multipart body: the part named `file` is written to `dest` (created 0600, must not exist), other parts are
 * text fields. Returns the fields and the file's size; 400 for a malformed body or no file, 413 past `limit` bytes.
 */
export async function spoolMultipart(
  body: ReadableStream<Uint8Array> | null,
  contentType: string,
  dest: string,
  limit: number,
  times: SpoolLimits = SPOOL_LIMITS,
): Promise<{ fields: Record<string, string>; fileBytes: number | null }> {
  if (!body) throw badRequest("file is required");
  const started = Date.now();
  const delimiter = Buffer.from(`\r\n--${boundaryOf(contentType)}`);
  const fields: Record<string, string> = {};
  let fileBytes: number | null = null;
  let out: ReturnType<typeof createWriteStream> | null = null;
  let field: { name: string; chunks: Buffer[]; size: number } | null = null;
  // the body is read as if a CRLF came before it, so the first boundary is found like the others
  let buf = Buffer.from("\r\n");
  let state: "preamble" | "after-boundary" | "headers" | "data" | "done" = "preamble";
  let total = 0;

  // small reads (a trickling client) are gathered into 64 KiB writes
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = async () => {
    if (!out || pendingBytes === 0) return;
    const data = Buffer.concat(pending);
    pending = [];
    pendingBytes = 0;
    if (!out.write(data)) await once(out, "drain");
  };
  const emit = async (data: Buffer) => {
    if (data.length === 0) return;
    if (out) {
      fileBytes = (fileBytes ?? 0) + data.length;
      // a copy: `data` is a view of the read buffer, which is replaced as parsing goes on
      pending.push(Buffer.from(data));
      pendingBytes += data.length;
      if (pendingBytes >= 64 * 1024) await flush();
    } else if (field) {
      field.size += data.length;
      if (field.size > MAX_FIELD) throw badRequest(`field ${field.name} is too long`);
      field.chunks.push(data);
    }
  };
  const endPart = async () => {
    if (out) {
      await flush();
      const o = out;
      out = null;
      o.end();
      await once(o, "close");
    }
    if (field && FIELDS.has(field.name)) fields[field.name] = Buffer.concat(field.chunks).toString("utf8");
    field = null;
  };
  let parts = 0;
  /** The next chunk, or a 400 when the body pauses too long or runs past its total time. */
  const next = async () => {
    const left = times.totalMs - (Date.now() - started);
    const wait = Math.min(times.stallMs, left);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            badRequest(
              wait < times.stallMs
                ? `the upload did not arrive within ${Math.round(times.totalMs / 1000)} s`
                : `the upload paused for more than ${Math.round(times.stallMs / 1000)} s`,
            ),
          ),
        Math.max(0, wait),
      );
    });
    try {
      return await Promise.race([reader.read(), late]);
    } finally {
      clearTimeout(timer);
    }
  };

  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await next();
      if (done) break;
      total += value.byteLength;
      if (total > limit) throw new HttpError(413);
      buf = buf.length ? Buffer.concat([buf, value]) : Buffer.from(value);
      for (;;) {
        if (state === "preamble" || state === "data") {
          const at = buf.indexOf(delimiter);
          if (at < 0) {
            // keep what could be the start of a delimiter split across chunks
            const keep = Math.min(buf.length, delimiter.length - 1);
            if (state === "data") await emit(buf.subarray(0, buf.length - keep));
            buf = buf.subarray(buf.length - keep);
            break;
          }
          if (state === "data") {
            await emit(buf.subarray(0, at));
            await endPart();
          }
          buf = buf.subarray(at + delimiter.length);
          state = "after-boundary";
        }
        if (state === "after-boundary") {
          if (buf.length < 2) break;
          const two = buf.subarray(0, 2).toString("latin1");
          if (two === "--") {
            state = "done";
            break;
          }
          // transport padding before the CRLF is allowed
          const eol = buf.indexOf("\r\n");
          if (eol < 0) {
            // padding is a few spaces: a line that never ends would be held (and copied) whole
            if (buf.length > MAX_PADDING) throw badRequest("malformed multipart body");
            break;
          }
          buf = buf.subarray(eol + 2);
          state = "headers";
        }
        if (state === "headers") {
          const end = buf.indexOf("\r\n\r\n");
          if ((end < 0 ? buf.length : end) > MAX_HEADERS) throw badRequest("malformed multipart body");
          if (end < 0) break;
          const { name, filename } = disposition(buf.subarray(0, end).toString("utf8"));
          buf = buf.subarray(end + 4);
          if (++parts > MAX_PARTS) throw badRequest(`the body may hold at most ${MAX_PARTS} parts`);
          if (name === "file" && filename !== null) {
            if (fileBytes !== null) throw badRequest("only one file may be sent");
            fileBytes = 0;
            out = createWriteStream(dest, { mode: 0o600, flags: "wx" });
            out.on("error", () => {});
          } else if (name) {
            field = { name, chunks: [], size: 0 };
          }
          state = "data";
          continue;
        }
        break;
      }
      if (state === "done") break;
    }
    if (state !== "done") throw badRequest("malformed multipart body");
  } catch (e) {
    reader.cancel().catch(() => {});
    throw e;
  } finally {
    await endPart().catch(() => {});
  }
  return { fields, fileBytes };
}
