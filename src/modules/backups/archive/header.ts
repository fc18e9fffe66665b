/**
 * One 512-byte tar header block, read the way Go's archive/tar (the Docker engine that extracts a restore) and GNU
 * tar read it: checksum (unsigned or signed sum), octal or GNU base-256 numbers, ustar `prefix` only under the
 * `ustar\0` magic (the GNU magic keeps times there), the star variant's shorter prefix.
 */
import { cString, decodeName } from "./names";

export const BLOCK = 512;

/** A header's fields, before extended headers are applied. */
export interface RawHeader {
  /** Type flag as a one-character string (`"\0"` for an old-style regular file). */
  type: string;
  /** Name as the archive's format reads it (`prefix/name` for ustar and pax). */
  name: string;
  /** Every other reading of the name a reader could make (name alone, either prefix length), to vet them all. */
  altNames: string[];
  /** Some name field holds bytes after a NUL (a name that one reader sees and another does not). */
  hiddenName: boolean;
  linkname: string;
  /** Size field, or an error text when it does not parse. */
  size: number | string;
  mode: number;
  uid: number;
  gid: number;
  mtime: number;
  format: "ustar" | "gnu" | "v7";
  /** A header readers would name differently (see parseHeader), or null. */
  problem: string | null;
}

/** Bytes as Latin-1 text (magic, version, numbers); a loop, since spreading or `subarray` per field is slow in Bun. */
function ascii(b: Uint8Array, from: number, to: number): string {
  let s = "";
  for (let i = from; i < to; i++) s += String.fromCharCode(b[i]);
  return s;
}

/** True for an all-zero block (half of the end-of-archive marker). */
export function isZeroBlock(b: Uint8Array): boolean {
  for (let i = 0; i < BLOCK; i++) if (b[i] !== 0) return false;
  return true;
}

/** Whether the checksum field matches the block (either sum, as old tars computed it signed). */
export function checksumOk(b: Uint8Array): boolean {
  const want = parseNumber(b, 148, 8);
  if (typeof want !== "number") return false;
  // sum every byte, then count the checksum field as eight spaces; the signed sum differs only by bytes over 127
  let unsigned = 0;
  let high = 0;
  for (let i = 0; i < BLOCK; i++) {
    const v = b[i];
    unsigned += v;
    high += v >> 7;
  }
  for (let i = 148; i < 156; i++) {
    unsigned -= b[i];
    high -= b[i] >> 7;
  }
  unsigned += 8 * 0x20;
  const signed = unsigned - 256 * high;
  return want === unsigned || want === signed;
}

/**
 * A numeric field: octal padded with spaces or NULs, or GNU base-256 (high bit of the first byte set). Returns an
 * error text for garbage, a negative number or one past 2^53 (a size no archive under the cap can have).
 */
export function parseNumber(field: Uint8Array, from = 0, len = field.length): number | string {
  const end = from + len;
  if (field[from] & 0x80) {
    if (field[from] === 0xff) return "negative number";
    let v = field[from] & 0x7f;
    for (let i = from + 1; i < end; i++) {
      v = v * 256 + field[i];
      if (v > Number.MAX_SAFE_INTEGER) return "number field overflows";
    }
    return v;
  }
  let a = from;
  let z = end;
  while (a < z && (field[a] === 0x20 || field[a] === 0)) a++;
  while (z > a && (field[z - 1] === 0x20 || field[z - 1] === 0)) z--;
  let v = 0;
  for (let i = a; i < z; i++) {
    const d = field[i] - 0x30;
    if (d < 0 || d > 7) return "malformed number field";
    v = v * 8 + d;
  }
  return v > Number.MAX_SAFE_INTEGER ? "number field overflows" : v;
}

const num = (b: Uint8Array, from: number, len: number) => {
  const v = parseNumber(b, from, len);
  return typeof v === "number" ? v : 0;
};

/** Read a header block whose checksum was already verified. */
export function parseHeader(b: Uint8Array): RawHeader {
  const nameF = cString(b, 0, 100);
  const linkF = cString(b, 157, 100);
  const magic = ascii(b, 257, 263);
  const version = ascii(b, 263, 265);
  const base = decodeName(nameF.bytes);
  const altNames: string[] = [];
  let name = base;
  let hiddenName = nameF.hidden;
  let format: RawHeader["format"] = "v7";
  let problem: string | null = null;
  if (magic === "ustar " && version === " \0") {
    format = "gnu";
    // Go reads a GNU header whose atime/ctime do not parse as a pre-Go 1.8 ustar one, prefix and all (golang/go#12594);
    // GNU tar never does. Seen through the engine: `docker cp` extracted "../../x/name". Refuse the ambiguity
    if (typeof parseNumber(b, 345, 12) === "string" || typeof parseNumber(b, 357, 12) === "string")
      problem = "malformed gnu time fields (go reads them as a name prefix)";
  }
  if (magic === "ustar\0") {
    format = "ustar";
    const star = ascii(b, 508, 512) === "tar\0";
    const long = cString(b, 345, 155);
    const short = cString(b, 345, 131);
    hiddenName ||= star ? short.hidden : long.hidden;
    const join = (p: Uint8Array) => (p.length ? `${decodeName(p)}/${base}` : base);
    // Go takes the prefix under the magic alone (131 bytes when the star trailer is there): vet every reading
    name = join(star ? short.bytes : long.bytes);
    for (const p of [long.bytes, short.bytes]) altNames.push(join(p));
    altNames.push(base);
  }
  return {
    type: String.fromCharCode(b[156]),
    name,
    altNames,
    hiddenName,
    linkname: decodeName(linkF.bytes) + (linkF.hidden ? "\0" : ""),
    size: parseNumber(b, 124, 12),
    mode: num(b, 100, 8),
    uid: num(b, 108, 8),
    gid: num(b, 116, 8),
    mtime: num(b, 136, 12),
    format,
    problem,
  };
}
