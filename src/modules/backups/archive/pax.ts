/**
 * Pax extended header records (`<length> <key>=<value>\n`), parsed as strictly as Go's archive/tar: the length
 * counts the whole record, every byte of the data belongs to a record, keys hold no `=` or NUL. The keys that change
 * where an entry lands or how long it is (path, linkpath, size) may appear once and never empty, since readers
 * disagree on what a repeated or empty one means.
 */

/** The records of one pax header, or an error text. */
export type PaxRecords = Map<string, string>;

/** Keys whose meaning changes where an entry's data goes or how long it is. */
const FRAMING = new Set(["path", "linkpath", "size"]);

const TIMES = new Set(["mtime", "atime", "ctime"]);

const utf8 = new TextDecoder("utf-8", { fatal: false });

/** Parse the data of an `x` or `g` header; returns an error text for anything malformed. */
export function parsePax(data: Uint8Array): PaxRecords | string {
  const out: PaxRecords = new Map();
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    if (space < 0 || space - at > 20) return "malformed pax record";
    const lenText = String.fromCharCode(...data.subarray(at, space));
    if (!/^[1-9][0-9]*$/.test(lenText)) return "malformed pax record length";
    const len = Number(lenText);
    const end = at + len;
    if (end > data.length || end <= space + 1 || data[end - 1] !== 0x0a) return "malformed pax record length";
    const record = data.subarray(space + 1, end - 1);
    const eq = record.indexOf(0x3d);
    if (eq <= 0) return "malformed pax record";
    const key = utf8.decode(record.subarray(0, eq));
    const value = utf8.decode(record.subarray(eq + 1));
    if (key.includes("\0")) return "NUL in pax key";
    if (FRAMING.has(key)) {
      if (out.has(key)) return `repeated pax ${key}`;
      if (value === "") return `empty pax ${key}`;
    }
    if (key === "size" && !/^[0-9]+$/.test(value)) return "malformed pax size";
    // Go's reader (the engine) fails on these when malformed: refuse them before anything is extracted
    if ((key === "uid" || key === "gid") && !/^[0-9]+$/.test(value)) return `malformed pax ${key}`;
    if (TIMES.has(key) && !/^-?[0-9]+(\.[0-9]+)?$/.test(value)) return `malformed pax ${key}`;
    // sparse files keep a map of holes inside their data: the extracted size is not the archived one
    if (key.startsWith("GNU.sparse.")) return "sparse file";
    out.set(key, value);
    at = end;
  }
  return out;
}

/** The pax size as a number, or an error text when past 2^53. */
export function paxSize(v: string): number | string {
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : "pax size overflows";
}
