/**
 * Which entry names a restore accepts: relative paths that stay inside the directory they are extracted into.
 * Backslashes count as separators and drive letters as absolute, so an archive meant for Windows cannot climb out
 * either; on Linux they are ordinary characters, and refusing them costs a benign archive nothing it needs.
 */

/** Why `name` cannot be extracted, or null when it is a safe relative path. */
export function nameProblem(name: string): string | null {
  if (name.length === 0) return "empty name";
  if (name.includes("\0")) return "NUL in name";
  if (name.startsWith("/") || name.startsWith("\\")) return "absolute path";
  if (/^[A-Za-z]:/.test(name)) return "absolute path (drive letter)";
  for (const seg of name.split(/[\\/]/)) if (seg === "..") return "parent directory segment";
  return null;
}

const NONE = new Uint8Array(0);

/** Bytes of a header field up to its first NUL, and whether anything but NULs follows it (a hidden name). */
export function cString(b: Uint8Array, from = 0, len = b.length): { bytes: Uint8Array; hidden: boolean } {
  const end = from + len;
  let nul = from;
  while (nul < end && b[nul] !== 0) nul++;
  let hidden = false;
  for (let i = nul + 1; i < end; i++) if (b[i] !== 0) hidden = true;
  return { bytes: nul === from ? NONE : b.subarray(from, nul), hidden };
}

const utf8 = new TextDecoder("utf-8", { fatal: false });

/** Name bytes as text (invalid UTF-8 becomes U+FFFD, which can never form a `/`, `\` or `.`). */
export function decodeName(bytes: Uint8Array): string {
  return bytes.length ? utf8.decode(bytes) : "";
}
