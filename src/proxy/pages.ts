/**
 * The proxy's own answers (404 unknown host, 403, 429, 502, 503, 504): small self-contained HTML pages with the status
 * in the title, no external assets, never cached.
 */

const TEXT: Record<number, string> = {
  400: "Bad Request",
  403: "Forbidden",
  404: "Not Found",
  408: "Request Timeout",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  505: "HTTP Version Not Supported",
};

const STYLE =
  "body{font:16px/1.5 system-ui,sans-serif;color:#222;background:#fafafa;margin:0;display:flex;min-height:100vh;" +
  "align-items:center;justify-content:center}main{max-width:34rem;padding:2rem}h1{font-size:1.5rem;margin:0 0 .5rem}" +
  "p{margin:0 0 1rem;color:#555}small{color:#999}@media(prefers-color-scheme:dark){body{background:#161616;color:#eee}" +
  "p{color:#aaa}}";

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The HTML of an error page. */
export function errorHtml(status: number, message: string): string {
  const title = `${status} ${TEXT[status] ?? "Error"}`;
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${title}</title><style>${STYLE}</style></head><body><main><h1>${title}</h1><p>${escapeHtml(message)}</p>` +
    `<small>sundeck</small></main></body></html>`
  );
}

const cache = new Map<string, string>();

/** An answer the proxy gives itself, written out by the raw engine. */
export interface LocalAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** An error page; `headers` adds e.g. Retry-After. Page texts are few and fixed, so they are cached. */
export function errorAnswer(status: number, message: string, headers?: Record<string, string>): LocalAnswer {
  const key = `${status}\n${message}`;
  let html = cache.get(key);
  if (html === undefined) {
    html = errorHtml(status, message);
    if (cache.size < 256) cache.set(key, html);
  }
  return { status, headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", ...headers }, body: html };
}
