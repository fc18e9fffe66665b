/** A service's `volumes` entries in short (`src:dst:mode`) and long (`{type, source, target}`) syntax, classified. */
import { isRecord, scalarText } from "./values";

/** One mount: a host path (bind), a named volume, an anonymous volume, or another kind compose knows. */
export interface Mount {
  type: "bind" | "volume" | "anonymous" | "tmpfs" | "npipe" | "image" | "cluster" | "unknown";
  /** Host path for binds, volume name for named volumes, "" otherwise. */
  source: string;
  target: string;
}

/** Whether a short-syntax source is a host path rather than a volume name (compose's own test). */
export function isHostPath(source: string): boolean {
  return /^[./~]/.test(source);
}

/** Classify one `volumes` entry of a service. */
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
  const text = scalarText(raw) ?? "";
  const parts = text.split(":");
  if (parts.length < 2) return { type: "anonymous", source: "", target: parts[0] ?? "" };
  const [source, target] = parts;
  if (source === "") return { type: "anonymous", source: "", target };
  return { type: isHostPath(source) ? "bind" : "volume", source, target };
}
