/**
 * The small pieces of an h2 exchange shared by the terminator and the forwarder: Sundeck's own answers as fetch
 * Responses, and the framing an h2 request body gets toward an HTTP/1.1 upstream.
 */
import type { LocalAnswer } from "../pages";

/** A LocalAnswer as a fetch Response (HEAD answered without its body). */
export function answerResponse(a: LocalAnswer, method: string): Response {
  return new Response(method === "HEAD" ? null : a.body, { status: a.status, headers: a.headers });
}

/** The request body framing toward the upstream. */
export function bodyFraming(req: Request): { line: string; bodyless: boolean } {
  const cl = req.headers.get("content-length");
  if (cl !== null) return { line: `content-length: ${cl}\r\n`, bodyless: cl === "0" || req.body === null };
  if (req.body === null) return { line: "", bodyless: true };
  return { line: "transfer-encoding: chunked\r\n", bodyless: false };
}
