/** The facts the rest of Sundeck needs about one service, read from its interpolated compose mapping. */
import { ComposeError, type ServiceInfo } from "./model";
import { parseMount } from "./mounts";
import { parsePorts } from "./ports";
import { isRecord, keyValues, scalarText } from "./values";

function replicasOf(name: string, svc: Record<string, any>): number | null {
  const raw = isRecord(svc.deploy) && svc.deploy.replicas !== undefined ? svc.deploy.replicas : svc.scale;
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== "number" || !Number.isInteger(raw) || raw < 0) {
    throw new ComposeError(name, "schema", "replicas must be a whole number of at least 0");
  }
  return raw;
}

/** Whether a healthcheck is configured and not switched off (`disable: true` or test `NONE`). */
export function hasHealthcheck(svc: Record<string, any>): boolean {
  const hc = svc.healthcheck;
  if (!isRecord(hc)) return false;
  if (hc.disable === true) return false;
  const test = Array.isArray(hc.test) ? hc.test[0] : hc.test;
  if (test === "NONE") return false;
  return true;
}

function labelsOf(name: string, raw: unknown): Record<string, string> {
  if (raw !== undefined && raw !== null && !Array.isArray(raw) && !isRecord(raw)) {
    throw new ComposeError(name, "schema", "labels must be a list or a mapping");
  }
  const out: Record<string, string> = {};
  for (const [k, v] of keyValues(raw)) out[k] = v ?? "";
  return out;
}

function scalableOf(name: string, labels: Record<string, string>): boolean | null {
  const v = labels["sundeck.scalable"];
  if (v === undefined) return null;
  if (v === "true") return true;
  if (v === "false") return false;
  throw new ComposeError(name, "label", `label sundeck.scalable must be true or false`);
}

/** Build the ServiceInfo of one service; malformed fields are ComposeErrors naming the service. */
export function serviceInfo(name: string, svc: Record<string, any>): ServiceInfo {
  const labels = labelsOf(name, svc.labels);
  const namedVolumes: string[] = [];
  if (svc.volumes !== undefined && svc.volumes !== null && !Array.isArray(svc.volumes)) {
    throw new ComposeError(name, "schema", "volumes must be a list");
  }
  for (const m of (svc.volumes ?? []).map(parseMount)) {
    if (m.type === "volume" && !namedVolumes.includes(m.source)) namedVolumes.push(m.source);
  }
  return {
    name,
    image: scalarText(svc.image),
    hasBuild: svc.build !== undefined && svc.build !== null,
    ports: parsePorts(name, svc.ports),
    envKeys: [...new Set(keyValues(svc.environment).map(([k]) => k))],
    labels,
    replicas: replicasOf(name, svc),
    hasHealthcheck: hasHealthcheck(svc),
    pullPolicy: scalarText(svc.pull_policy),
    namedVolumes,
    scalable: scalableOf(name, labels),
    containerName: scalarText(svc.container_name),
    networkMode: scalarText(svc.network_mode),
  };
}
