/**
 * Snapshot redaction for activity before/after values: any field whose name says it holds a secret is replaced,
 * at any depth, so no password, token or key ever reaches the log.
 */

export const REDACTED = "[redacted]";

const SECRET_NAME = /^key$|(pass(word)?|passphrase|secret|token|api_?key|private_?key|key_hash|credentials?)$/i;

/** Deep copy of `value` with every secret-named field replaced by `[redacted]`. */
export function redact<T>(value: T): T {
  return walk(value) as T;
}

function walk(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(walk);
  if (v && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, inner] of Object.entries(v as Record<string, unknown>)) {
      out[k] = SECRET_NAME.test(k) && inner !== null && inner !== undefined && inner !== "" ? REDACTED : walk(inner);
    }
    return out;
  }
  return v;
}

/** Registry snapshot: only name and host survive (SPEC activity rule 1). */
export function registrySnapshot(r: { name: string; url?: string; host?: string }): { name: string; host: string } {
  const raw = r.host ?? r.url ?? "";
  let host = raw;
  try {
    host = new URL(raw.includes("://") ? raw : `https://${raw}`).host;
  } catch {
    host = raw.replace(/^[a-z]+:\/\//i, "").split("/")[0];
  }
  return { name: r.name, host };
}
