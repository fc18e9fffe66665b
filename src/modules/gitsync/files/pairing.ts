/**
 * Pairing a file's entries with the stored ones by a key: identical entries first, then what is left of each key in
 * a fixed order. What stays unpaired is created (file side) or removed (stored side).
 */
import { canon } from "./shapes";

export interface Stored<S> {
  id: number;
  shape: S;
}

export interface Paired<S> {
  /** Same key, different content: to update. */
  changed: Array<{ stored: Stored<S>; wanted: S }>;
  /** Only in the file: to create. */
  added: S[];
  /** Only stored: to remove. */
  removed: Array<Stored<S>>;
}

const group = <T>(items: T[], key: (t: T) => string) => {
  const m = new Map<string, T[]>();
  for (const it of items) m.set(key(it), [...(m.get(key(it)) ?? []), it]);
  return m;
};

/** Pair `stored` with `wanted` by `key`. */
export function pair<S>(stored: Array<Stored<S>>, wanted: S[], key: (s: S) => string): Paired<S> {
  const out: Paired<S> = { changed: [], added: [], removed: [] };
  const have = group(stored, (s) => key(s.shape));
  const want = group(wanted, key);
  for (const k of [...new Set([...have.keys(), ...want.keys()])].sort()) {
    let h = [...(have.get(k) ?? [])].sort((a, b) => a.id - b.id);
    const w: S[] = [];
    for (const x of want.get(k) ?? []) {
      const same = h.findIndex((s) => canon(s.shape) === canon(x));
      if (same >= 0) h = h.filter((_, i) => i !== same);
      else w.push(x);
    }
    const n = Math.min(h.length, w.length);
    for (let i = 0; i < n; i++) out.changed.push({ stored: h[i], wanted: w[i] });
    out.added.push(...w.slice(n));
    out.removed.push(...h.slice(n));
  }
  return out;
}

/** The fields of `wanted` that differ from `stored` (compared as canonical JSON). */
export function diffFields<S extends object, K extends keyof S>(stored: S, wanted: S, keys: readonly K[]): Partial<Pick<S, K>> {
  const out: Partial<Pick<S, K>> = {};
  for (const k of keys) if (canon(stored[k]) !== canon(wanted[k])) out[k] = wanted[k];
  return out;
}
