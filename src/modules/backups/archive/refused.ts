/**
 * The one error the archive checks throw: a 400 whose line names the entry and the rule it broke, so a refused
 * restore tells the person which file of their archive to look at.
 */
import { HttpError } from "../../../lib/errors";

/** Longest entry name shown in a message (the rest is elided in the middle). */
const SHOWN = 160;

/** An archive refused before anything was extracted: `archive entry "../etc/passwd": parent directory segment`. */
export class ArchiveRefused extends HttpError {
  constructor(
    /** The offending entry's name as read (or null for the archive as a whole: gzip, size cap, end marker). */
    readonly entry: string | null,
    /** What is wrong with it, lower-case, e.g. `symlink`, `parent directory segment`. */
    readonly rule: string,
  ) {
    const line = entry === null ? `archive refused: ${rule}` : `archive entry ${showName(entry)}: ${rule}`;
    super(400, line);
    this.name = "ArchiveRefused";
    this.message = line;
  }
}

/** Text of the cap refusal, the same whether the bytes came raw or out of gzip. */
export const overCap = (maxBytes: number) => `decompressed size over the cap of ${maxBytes} bytes`;

/** A name made safe to print on one line: quoted, control characters escaped, long names cut in the middle. */
export function showName(name: string): string {
  let s = name;
  if (s.length > SHOWN) s = `${s.slice(0, SHOWN / 2)}…${s.slice(-SHOWN / 2)}`;
  s = s.replace(/["\\\u0000-\u001f\u007f]/g, (c) =>
    c === '"' || c === "\\" ? `\\${c}` : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
  return `"${s}"`;
}
