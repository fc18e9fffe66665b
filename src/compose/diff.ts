/**
 * What changed between two versions of an app's compose file, for activity entries: services added or removed, and
 * per service image, env keys, ports, replicas, labels and healthcheck. Env values never leave: only whether they changed.
 */
import { createHash } from "node:crypto";
import { REDACTED } from "../lib/redact";
import type { ComposeProject, ServiceInfo } from "./model";
import { formatPort } from "./ports";
import { keyValues } from "./values";

/** Longest summary line. */
export const MAX_SUMMARY = 300;

/** A service as activity snapshots show it: env names only, values redacted. */
export interface ServiceSnapshot {
  image: string | null;
  build: boolean;
  env: Record<string, string>;
  ports: string[];
  replicas: number | null;
  labels: Record<string, string>;
  healthcheck: boolean;
}

/** The result of comparing two versions. */
export interface ComposeDiff {
  changes: string[];
  summary: string;
  before: { services: Record<string, ServiceSnapshot> } | null;
  after: { services: Record<string, ServiceSnapshot> };
}

function snapshot(s: ServiceInfo): ServiceSnapshot {
  return {
    image: s.image,
    build: s.hasBuild,
    env: Object.fromEntries(s.envKeys.map((k) => [k, REDACTED])),
    ports: s.ports.map((p) => formatPort(p)),
    replicas: s.replicas,
    labels: { ...s.labels },
    healthcheck: s.hasHealthcheck,
  };
}

function snapshots(p: ComposeProject): Record<string, ServiceSnapshot> {
  return Object.fromEntries(p.services.map((s) => [s.name, snapshot(s)]));
}

/** Hashes of a service's env values, compared and then dropped (never stored: short secrets hash guessably). */
function envHashes(p: ComposeProject, service: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of keyValues(p.doc.services?.[service]?.environment)) {
    out.set(
      k,
      createHash("sha256")
        .update(v === null ? "\0unset" : `=${v}`)
        .digest("hex"),
    );
  }
  return out;
}

function short(v: string | number | null): string {
  if (v === null) return "none";
  const s = String(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

function serviceChanges(name: string, a: ServiceInfo, b: ServiceInfo, before: ComposeProject, after: ComposeProject): string[] {
  const out: string[] = [];
  if (a.image !== b.image) out.push(`image ${short(a.image)} → ${short(b.image)}`);
  const ha = envHashes(before, name);
  const hb = envHashes(after, name);
  for (const k of b.envKeys) if (!a.envKeys.includes(k)) out.push(`env ${k} added`);
  for (const k of a.envKeys) if (!b.envKeys.includes(k)) out.push(`env ${k} removed`);
  for (const k of b.envKeys) if (a.envKeys.includes(k) && ha.get(k) !== hb.get(k)) out.push(`env ${k} changed`);
  const pa = a.ports.map((p) => formatPort(p)).join(", ");
  const pb = b.ports.map((p) => formatPort(p)).join(", ");
  if (pa !== pb) out.push(`ports ${pa || "none"} → ${pb || "none"}`);
  // compose runs one replica when none is set: unset and 1 are the same count
  if ((a.replicas ?? 1) !== (b.replicas ?? 1)) out.push(`replicas ${a.replicas ?? 1} → ${b.replicas ?? 1}`);
  for (const [k, v] of Object.entries(b.labels)) {
    if (!Object.hasOwn(a.labels, k)) out.push(`label ${k} added (${short(v)})`);
    else if (a.labels[k] !== v) out.push(`label ${k} ${short(a.labels[k])} → ${short(v)}`);
  }
  for (const k of Object.keys(a.labels)) if (!Object.hasOwn(b.labels, k)) out.push(`label ${k} removed`);
  if (a.hasHealthcheck !== b.hasHealthcheck) out.push(`healthcheck ${b.hasHealthcheck ? "added" : "removed"}`);
  return out;
}

/** Compare two versions (`before` null for a first deploy) into change lines, a one-line summary and snapshots. */
export function diffCompose(before: ComposeProject | null, after: ComposeProject): ComposeDiff {
  const old = new Map((before?.services ?? []).map((s) => [s.name, s]));
  const now = new Map(after.services.map((s) => [s.name, s]));
  const added = [...now.keys()].filter((n) => !old.has(n));
  const removed = [...old.keys()].filter((n) => !now.has(n));
  const changes: string[] = [];
  const segments: string[] = [];
  if (added.length) segments.push(`services added: ${added.join(", ")}`);
  if (removed.length) segments.push(`services removed: ${removed.join(", ")}`);
  changes.push(...segments);
  for (const [name, b] of now) {
    const a = old.get(name);
    if (!a || !before) continue;
    const parts = serviceChanges(name, a, b, before, after);
    if (!parts.length) continue;
    changes.push(...parts.map((p) => `${name}: ${p}`));
    segments.push(`${name}: ${parts.join(", ")}`);
  }
  let summary = segments.length ? segments.join("; ") : "no changes";
  if (summary.length > MAX_SUMMARY) summary = `${summary.slice(0, MAX_SUMMARY - 1)}…`;
  return { changes, summary, before: before ? { services: snapshots(before) } : null, after: { services: snapshots(after) } };
}
