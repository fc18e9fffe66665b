/**
 * How a forwarded exchange ends when something goes wrong: Sundeck's own error page while nothing of the response has
 * reached the client, a dropped connection after; and the periodic check of its deadlines and body gaps.
 */
import { HSTS_VALUE } from "../headers";
import { errorAnswer } from "../pages";
import type { Exchange } from "./exchange";
import type { FramingError } from "./framing";
import { discard } from "./pool";

/** Answer the client with an error page (when no final head was written), or drop it. */
export function fail(ex: Exchange, status: 502 | 504, error: string): void {
  const { log } = ex.core;
  const fields = { app: ex.a.route.app, upstream: ex.a.upstream, error };
  if (status === 504)
    log.warn("upstream sent no response headers in time", {
      ...fields,
      ms: ex.upgrade ? ex.core.wsConnectMs : ex.core.headersMs,
    });
  else log.warn("upstream request failed", fields);
  if (ex.up !== null) discard(ex.up);
  ex.finish();
  if (ex.headSent || ex.tunnel) {
    ex.conn.link.terminate();
    return;
  }
  const message =
    status === 504
      ? "The app did not answer in time. Please try again."
      : "The app could not be reached. Please try again in a moment.";
  localAnswer(ex, status, message, ex.closeAfter || !ex.reqBody.done);
}

/** One of Sundeck's own answers in place of the app's; the exchange is over. */
function localAnswer(ex: Exchange, status: number, message: string, close: boolean): void {
  const hsts = ex.a.info.secure && ex.a.route.tls !== "off";
  const a = errorAnswer(status, message, hsts ? { "strict-transport-security": HSTS_VALUE } : undefined);
  ex.core.record(ex.a, status);
  ex.conn.ex = null;
  ex.conn.answer(a, ex.head.method, close);
  if (!close) ex.conn.exchangeEnded(false);
}

/** The request body broke its framing: 400 while nothing was answered, else the connection drops. */
export function requestBodyError(ex: Exchange, e: FramingError): void {
  ex.core.log.debug("malformed request body", { app: ex.a.route.app, error: e.message });
  if (ex.up !== null) discard(ex.up);
  const answered = ex.wrote;
  ex.finish();
  if (answered) ex.conn.link.terminate();
  else localAnswer(ex, e.status, "The request was malformed.", true);
}

/** Both sides are out of step (a malformed response body): close both. */
export function abandonBoth(ex: Exchange, why: string): void {
  ex.core.log.warn("proxied message malformed, connection closed", { app: ex.a.route.app, error: why });
  if (ex.up !== null) discard(ex.up);
  ex.finish();
  ex.conn.link.terminate();
}

/** The periodic check: response head deadline, request body and response body gaps. */
export function exchangeTimeouts(ex: Exchange, now: number): void {
  if (ex.finished || ex.tunnel) return;
  const limits = ex.conn.server.limits;
  if (ex.deadline > 0 && now > ex.deadline && ex.res === null) {
    fail(ex, 504, "timeout");
    return;
  }
  // a side paused by backpressure is not idle
  if (ex.conn.paused) ex.lastBodyAt = now;
  if (ex.upPaused) ex.lastUpAt = now;
  if (!ex.reqBody.done && now - ex.lastBodyAt > limits.bodyTimeoutMs) {
    ex.core.log.debug("request body timed out", { app: ex.a.route.app });
    if (ex.up !== null) discard(ex.up);
    const answered = ex.wrote;
    ex.finish();
    if (answered) ex.conn.link.terminate();
    else localAnswer(ex, 408, "The request body did not arrive in time.", true);
    return;
  }
  if (ex.res !== null && !ex.resBody!.done && now - ex.lastUpAt > limits.upstreamBodyTimeoutMs) {
    ex.core.log.warn("upstream response body timed out", { app: ex.a.route.app, upstream: ex.a.upstream });
    if (!ex.headSent) fail(ex, 502, "response body timed out");
    else abandonBoth(ex, "response body timed out");
  }
}
