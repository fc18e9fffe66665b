/**
 * The one mapping from failures to answers: typed HttpErrors keep their status (and safe reason), Elysia's own
 * errors map to 400/404, anything else is a 500 whose detail goes to the process log only.
 */
import type { ValidationError } from "elysia";
import { errorLine, HttpError } from "../lib/errors";
import type { Log } from "../log/logger";

/** Status, safe reason and extra headers for an error. */
export function classify(
  code: unknown,
  error: unknown,
  log: Log,
  where: string,
): { status: number; reason?: string; headers?: Record<string, string> } {
  if (error instanceof HttpError) return { status: error.status, reason: error.reason, headers: error.headers };
  switch (code) {
    case "VALIDATION": {
      const v = error as ValidationError;
      if (v.type === "response") break;
      if (typeof v.customError === "string") return { status: 400, reason: v.customError };
      const first = v.valueError ?? v.all?.[0];
      const field = first?.path?.replace(/^\//, "").replace(/\//g, ".") || v.type;
      const what = (first?.message ?? "invalid value").replace(/^Expected/, "expected");
      return { status: 400, reason: `${field}: ${what}` };
    }
    case "NOT_FOUND":
      return { status: 404 };
    case "PARSE":
      return { status: 400, reason: "malformed body" };
    case "INVALID_COOKIE_SIGNATURE":
    case "INVALID_FILE_TYPE":
      return { status: 400 };
  }
  const e = error as Error;
  log.error("request failed", { where, error: e?.message ?? String(e), stack: e?.stack?.split("\n").slice(1, 4).join(" | ") });
  return { status: 500 };
}

/**
 * Elysia onError handler: sets status and headers, returns the one-line body. A 413 also closes the connection: the
 * rest of the oversized body may still be on its way, and the connection would stay busy (and hold up a graceful stop).
 */
export function errorHandler(log: Log) {
  return ({ code, error, set, request }: { code: unknown; error: unknown; set: any; request: Request }) => {
    const { status, reason, headers } = classify(code, error, log, `${request.method} ${new URL(request.url).pathname}`);
    set.status = status;
    set.headers["content-type"] = "text/plain; charset=utf-8";
    if (headers) Object.assign(set.headers, headers);
    if (status === 413) set.headers.connection = "close";
    return errorLine(status, reason);
  };
}
