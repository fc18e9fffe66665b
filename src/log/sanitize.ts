/** Cleaning of process-log lines: ANSI/OSC escapes stripped, control characters but tab dropped, 8 KiB cap. */

/** Longest line kept, in UTF-8 bytes. */
export const MAX_LINE_BYTES = 8 * 1024;

// OSC (terminated by BEL or ST, or unterminated to end), CSI, then any other two-byte escape
const ESCAPES = /\x1b\][^\x07\x1b]*(?:\x07|\x1b\\|$)|\x1b\[[0-?]*[ -/]*[@-~]?|\x9b[0-?]*[ -/]*[@-~]?|\x1b[ -/]*[0-~]?/g;
// C0 controls except tab, DEL, and C1 controls
const CONTROLS = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/g;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** One safe log line from arbitrary text. */
export function sanitizeLine(text: string): string {
  const clean = text.replace(ESCAPES, "").replace(CONTROLS, "");
  return truncateUtf8(clean, MAX_LINE_BYTES);
}

/** Cut `s` to at most `max` UTF-8 bytes without splitting a character. */
export function truncateUtf8(s: string, max: number): string {
  if (s.length * 3 <= max) return s;
  const bytes = encoder.encode(s);
  if (bytes.length <= max) return s;
  let end = max;
  // step back over continuation bytes so a multi-byte character is never cut in half
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return decoder.decode(bytes.subarray(0, end));
}
