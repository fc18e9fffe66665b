/**
 * One error type for the whole server: a status, and for client-correctable statuses an optional reason that is safe
 * to show. Everything else (paths, stderr, SQL) goes to the process log, never into a response.
 */

/** Statuses whose error line may carry a reason after the status text (CONTRACT: 400, 409, 413, 422; 401 for login). */
// 503 names what is missing (Docker, the proxy): the operator can fix it, and it holds no path or internal detail
const REASON_ALLOWED = new Set([400, 401, 409, 413, 422, 429, 503]);

/** Standard status texts for the statuses we answer with. */
export const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** An error that maps to an HTTP answer. `reason` is shown to the client only where the status allows it. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly reason?: string,
    readonly headers?: Record<string, string>,
  ) {
    super(reason ? `${STATUS_TEXT[status] ?? status}: ${reason}` : (STATUS_TEXT[status] ?? String(status)));
  }
}

export const badRequest = (reason?: string) => new HttpError(400, reason);
export const unauthorized = (reason?: string) => new HttpError(401, reason);
export const forbidden = () => new HttpError(403);
export const notFound = () => new HttpError(404);
export const conflict = (reason?: string) => new HttpError(409, reason);

/** The one-line text/plain body for an error status. */
export function errorLine(status: number, reason?: string): string {
  const text = STATUS_TEXT[status] ?? "Error";
  if (!reason || !REASON_ALLOWED.has(status)) return text;
  return `${text}: ${oneLine(reason)}`;
}

/** Build the text/plain error response every failing route answers with. */
export function errorResponse(status: number, reason?: string, headers?: Record<string, string>): Response {
  return new Response(errorLine(status, reason), {
    status,
    headers: { "content-type": "text/plain; charset=utf-8", ...headers },
  });
}

function oneLine(s: string): string {
  return s.replace(/[\r\n]+/g, " ").slice(0, 300);
}
