/**
 * Short volume syntax (`src:dst:opts`) and bind host paths, read as Docker Compose v2 reads them on a Linux host
 * (compose-go `format/volume.go` ParseVolume, `paths/unix.go`, `paths/home.go`, `paths/windows_path.go`).
 */
import { ComposeError } from "./model";

/** One short-syntax `volumes` entry. */
export interface VolumeSpec {
  /** `bind` when the source is a file path (compose's isFilePath), else `volume` (anonymous when source is ""). */
  type: "bind" | "volume";
  source: string;
  /** As written; compose cleans it (`path.Clean`) afterwards. */
  target: string;
  /** The last of `ro`/`rw` wins; false when neither is given. */
  readOnly: boolean;
  /** Every comma-separated option as written, those compose ignores included. */
  options: string[];
}

/** Where compose would put a bind's host path, or why Sundeck will not say. */
export type HostPath = { path: string } | { refused: string };

/** ParseVolume appends a NUL as end marker, so a NUL inside the spec ends a section the same way. */
const END = "\0";

function fail(spec: string, reason: string): ComposeError {
  return new ComposeError(null, "volume-spec", `invalid volume spec ${JSON.stringify(spec)}: ${reason}`);
}

function isLetter(ch: string): boolean {
  return /^\p{L}$/u.test(ch);
}

/** A single letter buffered and then `:`, the drive letter of a Windows path (not a separator). */
function isWindowsDrive(buffer: string[], ch: string): boolean {
  return ch === ":" && buffer.length === 1 && isLetter(buffer[0]);
}

/**
 * Whether a short-syntax source names a host path rather than a volume: it starts with `.`, `/` or `~`, is a UNC or
 * named-pipe path (`\\`), or starts with a drive letter (`c:`, any Unicode letter).
 */
export function isFilePath(source: string): boolean {
  if (source === "") return false;
  if (source[0] === "." || source[0] === "/" || source[0] === "~") return true;
  if (source.startsWith("\\\\")) return true;
  const first = String.fromCodePoint(source.codePointAt(0)!);
  if (source.length <= first.length) return false;
  return isWindowsDrive([first], source[first.length]);
}

/**
 * Parse one short-syntax `volumes` entry as compose does: a spec of one or two bytes is a target alone; otherwise it
 * splits on `:` except a drive letter's colon and colons inside `${...}`. Throws `ComposeError(null, "volume-spec")`
 * on an empty spec, an empty section or too many colons.
 */
export function parseVolumeSpec(spec: string): VolumeSpec {
  const volume: VolumeSpec = { type: "volume", source: "", target: "", readOnly: false, options: [] };
  const bytes = Buffer.byteLength(spec, "utf8");
  if (bytes === 0) throw fail(spec, "empty volume spec");
  if (bytes <= 2) {
    volume.target = spec;
    return volume;
  }
  const chars = [...spec, END];
  let buffer: string[] = [];
  let inVariable = 0;
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i];
    if (ch === "$" && chars[i + 1] === "{") {
      inVariable++;
      buffer.push(ch);
    } else if (ch === "}" && inVariable > 0) {
      inVariable--;
      buffer.push(ch);
    } else if (isWindowsDrive(buffer, ch)) {
      buffer.push(ch);
    } else if ((ch === ":" || ch === END) && inVariable === 0) {
      fillSection(spec, volume, ch, buffer.join(""));
      buffer = [];
    } else {
      buffer.push(ch);
    }
  }
  // an unclosed `${` swallows the rest, end marker included, and compose leaves it unread
  volume.type = isFilePath(volume.source) ? "bind" : "volume";
  return volume;
}

/** Source, then target, then options (the last section only). */
function fillSection(spec: string, volume: VolumeSpec, ch: string, section: string): void {
  if (section === "") throw fail(spec, "empty section between colons");
  if (volume.source === "" && ch === END) volume.target = section;
  else if (volume.source === "") volume.source = section;
  else if (volume.target === "") volume.target = section;
  else if (ch === ":") throw fail(spec, "too many colons");
  else {
    for (const option of section.split(",")) {
      if (option === "ro") volume.readOnly = true;
      else if (option === "rw") volume.readOnly = false;
      // nocopy, propagations and z/Z set other fields; anything else compose ignores
      volume.options.push(option);
    }
  }
}

function isSeparator(c: number | undefined): boolean {
  return c === 0x5c || c === 0x2f; // `\` or `/`
}

/** `\\.\UNC`-style prefix test, ignoring ASCII case and treating `/` and `\` alike; the next byte must separate. */
function hasPrefixFold(s: Uint8Array, prefix: string): boolean {
  if (s.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) {
    const p = prefix.charCodeAt(i);
    if (isSeparator(p)) {
      if (!isSeparator(s[i])) return false;
    } else if (upper(p) !== upper(s[i])) return false;
  }
  return s.length === prefix.length || isSeparator(s[prefix.length]);
}

function upper(c: number): number {
  return c >= 0x61 && c <= 0x7a ? c - 0x20 : c;
}

/** Length in bytes of a UNC volume prefix: up to the second separator after `from`. */
function uncLength(s: Uint8Array, from: number): number {
  let count = 0;
  for (let i = from; i < s.length; i++) {
    if (isSeparator(s[i]) && ++count === 2) return i;
  }
  return s.length;
}

/** Length in bytes of the Windows volume name a path starts with (`c:`, `\\host\share`, `\\?\c:`), 0 if none. */
function volumeNameLength(s: Uint8Array): number {
  if (s.length >= 2 && s[1] === 0x3a) return 2; // byte 1 is `:`, whatever byte 0 is
  if (s.length === 0 || !isSeparator(s[0])) return 0;
  if (hasPrefixFold(s, "\\\\.\\UNC")) return uncLength(s, "\\\\.\\UNC\\".length);
  if (hasPrefixFold(s, "\\\\.") || hasPrefixFold(s, "\\\\?") || hasPrefixFold(s, "\\??")) {
    if (s.length === 3) return 3;
    const rest = s.subarray(4);
    const cut = rest.findIndex((c) => isSeparator(c));
    if (cut < 0) return s.length;
    return s.length - (rest.length - cut - 1) - 1;
  }
  if (s.length >= 2 && isSeparator(s[1])) return uncLength(s, 2);
  return 0;
}

/**
 * Whether a path is absolute for Windows (`c:\x`, `c:/x`, `\\host\share\x`, `//host/share`), the test compose applies
 * on any platform before making a bind path absolute (compose-go `paths.IsWindowsAbs`).
 */
export function isWindowsAbs(path: string): boolean {
  const s = Buffer.from(path, "utf8");
  const length = volumeNameLength(s);
  if (length === 0) return false;
  if (isSeparator(s[0]) && isSeparator(s[1])) return true;
  if (length >= s.length) return false;
  return isSeparator(s[length]);
}

/** Go `path.Clean`: collapse `//`, drop `.`, resolve `..` lexically, no trailing slash; "" is ".". */
export function cleanPath(path: string): string {
  if (path === "") return ".";
  const rooted = path.startsWith("/");
  const parts: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (parts.length > 0 && parts[parts.length - 1] !== "..") parts.pop();
      else if (!rooted) parts.push("..");
      continue;
    }
    parts.push(segment);
  }
  const out = (rooted ? "/" : "") + parts.join("/");
  return out === "" ? "." : out;
}

/** Go `filepath.Join` on Linux: the non-empty parts joined with `/`, then cleaned; "" when all are empty. */
export function joinPath(...parts: string[]): string {
  const kept = parts.filter((p) => p !== "");
  return kept.length === 0 ? "" : cleanPath(kept.join("/"));
}

/**
 * Where compose v2 puts a bind's host path on a Linux host: a relative path is joined to `baseDir` (the project
 * directory, or the directory of the file that declared it), an absolute one kept; both are cleaned. Refused rather
 * than resolved: `~` paths (compose would read `$HOME` of its own process), Windows drive and UNC paths (compose keeps
 * `c:\x` as written and Docker on Linux rejects it; `c:x` would land under the project as a file named `c:x`, a
 * reading too surprising to check), and NUL bytes.
 */
export function composeHostPath(source: string, baseDir: string): HostPath {
  if (source.includes("\0")) return { refused: "path contains a NUL byte" };
  if (source.startsWith("~")) return { refused: "home directory paths are not allowed" };
  if (source.startsWith("/")) return { path: cleanPath(source) };
  if (source.startsWith("\\\\") || isWindowsAbs(source) || /^.:/su.test(source)) {
    return { refused: "Windows paths are not supported" };
  }
  return { path: joinPath(baseDir, source) };
}
