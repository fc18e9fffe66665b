/**
 * Turning an app's files into something safe to run: parse and interpolate with the app's .env, check every safety
 * rule, read the labels, and render the compose file Sundeck actually runs. Pure: no Docker, no database.
 */
import { PUBLIC_NETWORK } from "../docker/naming";
import { parseEnvFile } from "./envfile";
import { parseAppLabels } from "./labels";
import type { AppLabels, ComposeProject, SafetyPolicy } from "./model";
import { parseCompose } from "./parse";
import { renderCompose } from "./rewrite";
import { checkSafety, type ReadFile } from "./security";

export interface Prepared {
  project: ComposeProject;
  labels: AppLabels;
  /** Services with endpoints. */
  routed: string[];
  /** The compose file Sundeck runs. */
  rendered: string;
}

/**
 * Validate and render; `readFile` reads the files the compose file pulls in (default: the disk). Throws ComposeError (a 400 naming the service and rule) on anything unsafe or malformed. */
export function prepare(compose: string, envText: string, policy: SafetyPolicy, readFile?: ReadFile): Prepared {
  const env = parseEnvFile(envText);
  const project = parseCompose(compose, env);
  checkSafety(project, policy, readFile);
  const labels = parseAppLabels(project);
  const routed = [...new Set(labels.endpoints.map((e) => e.service))];
  return { project, labels, routed, rendered: renderCompose(project, { routed, publicNetwork: PUBLIC_NETWORK }) };
}

/** The services `up` starts (those without profiles), and the ones allowed to exit 0 (no restart policy). */
export function expectation(project: ComposeProject, scale: Record<string, number>) {
  const services: string[] = [];
  const oneShot = new Set<string>();
  for (const [name, svc] of Object.entries<any>(project.doc.services ?? {})) {
    if (Array.isArray(svc?.profiles) && svc.profiles.length > 0) continue;
    if (scale[name] === 0) continue;
    services.push(name);
    const restart = String(svc?.restart ?? "no");
    if (restart === "no" || restart === "false") oneShot.add(name);
  }
  return { services, oneShot };
}
