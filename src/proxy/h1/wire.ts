/** Serialising heads for the raw engine: status lines and header blocks as the engine writes them (latin1 text). */

/** The line the engine adds when a connection closes after the current message. */
export const CONNECTION_CLOSE = "connection: close\r\n";

/** `HTTP/1.1 <status> <reason>` (without a reason when there is none). */
export function statusLine(status: number, reason: string): string {
  return reason ? `HTTP/1.1 ${status} ${reason}` : `HTTP/1.1 ${status}`;
}

/** A head: the first line, the header pairs, then `extra` (preformatted lines such as framing), and the blank line. */
export function serializeHead(first: string, pairs: Array<[string, string]>, extra = ""): string {
  let s = `${first}\r\n`;
  for (const [k, v] of pairs) s += `${k}: ${v}\r\n`;
  return `${s}${extra}\r\n`;
}
