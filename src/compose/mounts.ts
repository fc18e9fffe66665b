/** A service's `volumes` entries in short (`src:dst:mode`) and long (`{type, source, target}`) syntax, classified. */
import { isRecord, scalarText } from "./values";
import { cleanPath, isFilePath, parseVolumeSpec } from "./volume-spec";

/** One mount: a host path (bind), a named volume, an anonymous volume, or another kind compose knows. */
export interface Mount {
  type: "bind" | "volume" | "anonymous" | "tmpfs" | "npipe" | "image" | "cluster" | "unknown";
  /** Host path for binds, volume name for named volumes, "" otherwise. */
  source: string;
  target: string;
}

/**
 * Whether a short-syntax source is a host path rather than a volume name, compose v2's own test: it starts with `.`,
 * `/` or `~`, with `\\` (UNC, named pipe) or with a drive letter (`c:`).
 */
export function isHostPath(source: string): boolean {
  return isFilePath(source);
}

/**
 * Classify one `volumes` entry of a service. Short syntax is read as compose v2 reads it (see volume-spec.ts) and
 * throws `ComposeError(null, "volume-spec")` where compose refuses the entry; its target is cleaned as compose does.
 */
export function parseMount(raw: unknown): Mount {
  if (isRecord(raw)) {
    const source = scalarText(raw.source) ?? "";
    const target = scalarText(raw.target) ?? "";
    const type = scalarText(raw.type) ?? "";
    if (type === "bind") return { type: "bind", source, target };
    if (type === "volume") return { type: source ? "volume" : "anonymous", source, target };
    if (type === "tmpfs" || type === "npipe" || type === "image" || type === "cluster") return { type, source, target };
    // no or unknown type: judge by the source so nothing path-like slips through
    if (source && isHostPath(source)) return { type: "bind", source, target };
    return { type: source ? "unknown" : "anonymous", source, target };
  }
  const spec = parseVolumeSpec(scalarText(raw) ?? "");
  const target = spec.target === "" ? "" : cleanPath(spec.target);
  if (spec.type === "bind") return { type: "bind", source: spec.source, target };
  return { type: spec.source ? "volume" : "anonymous", source: spec.source, target };
}
