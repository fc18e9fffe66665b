/**
 * Apps on the client's disk: a directory holding `docker-compose.yml` (or `compose.yaml`) and an optional `.env` is
 * one app named by the directory. Read for apply, diff and sync; written (atomically, `.env` 0600) by pull.
 */
import { chmodSync, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { formatEnvFile, parseEnvFile } from "../compose/envfile";
import { writeFileAtomic } from "../lib/fs";
import { isSlug } from "../shared/slug";
import { ClientError } from "./errors";

/** Compose file names looked for in an app directory, in order. */
export const COMPOSE_NAMES = ["docker-compose.yml", "docker-compose.yaml", "compose.yaml", "compose.yml"];

/** One app as the client has it. */
export interface LocalApp {
  slug: string;
  composePath: string;
  compose: string;
  /** The env file's path, or null when the app has none (the server then keeps its own). */
  envPath: string | null;
  env: Record<string, string> | null;
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    const code = (e as { code?: string }).code;
    throw new ClientError(
      `cannot read ${path}: ${code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : code}`,
    );
  }
}

/** Parse an env file, naming it in the error. */
export function readEnvFile(path: string): Record<string, string> {
  try {
    return parseEnvFile(readText(path));
  } catch (e) {
    if (e instanceof ClientError) throw e;
    throw new ClientError(`${path}: ${(e as { reason?: string }).reason ?? (e as Error).message}`);
  }
}

/** A compose file with the env file given, or else the `.env` next to it when there is one. */
export function readComposeFile(file: string, slug: string, envFile?: string): LocalApp {
  const composePath = resolve(file);
  const compose = readText(composePath);
  const envPath = envFile ? resolve(envFile) : join(dirname(composePath), ".env");
  const has = envFile !== undefined || (existsSync(envPath) && statSync(envPath).isFile());
  return { slug, composePath, compose, envPath: has ? envPath : null, env: has ? readEnvFile(envPath) : null };
}

/** The compose file of an app directory, or null. */
export function composeIn(dir: string): string | null {
  for (const n of COMPOSE_NAMES) {
    const p = join(dir, n);
    if (existsSync(p) && statSync(p).isFile()) return p;
  }
  return null;
}

/** An app directory; the slug is `slug` or the directory's name, which must then be a valid slug. */
export function readAppDir(dir: string, slug?: string): LocalApp {
  const abs = resolve(dir);
  if (!existsSync(abs) || !statSync(abs).isDirectory()) throw new ClientError(`${dir} is not a directory`);
  const name = slug ?? basename(abs);
  if (!isSlug(name)) {
    const hint = slug === undefined ? " (the directory's name; pass --name to choose another)" : "";
    throw new ClientError(
      `${JSON.stringify(name)}${hint} is not a valid app name: lowercase letters and digits separated by single dashes`,
    );
  }
  const file = composeIn(abs);
  if (!file) throw new ClientError(`${dir} has no docker-compose.yml`);
  return readComposeFile(file, name);
}

/** Every app directory under `root` (subdirectories with a compose file), sorted by slug. */
export function listAppDirs(root: string): LocalApp[] {
  const abs = resolve(root);
  if (!existsSync(abs) || !statSync(abs).isDirectory()) throw new ClientError(`${root} is not a directory`);
  const apps: LocalApp[] = [];
  for (const e of readdirSync(abs, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (!e.isDirectory() || e.name.startsWith(".") || !composeIn(join(abs, e.name))) continue;
    if (!isSlug(e.name)) throw new ClientError(`${join(root, e.name)}: ${JSON.stringify(e.name)} is not a valid app name`);
    apps.push(readAppDir(join(abs, e.name)));
  }
  return apps;
}

/** The canonical `.env` text of a map (what the server writes for it). */
export const envText = (env: Record<string, string>) => formatEnvFile(env);

/** Write an app's files under `root/<slug>/`: compose 0644, `.env` 0600, each atomically. */
export function writeAppDir(root: string, slug: string, compose: string, env: Record<string, string>): string[] {
  const dir = join(resolve(root), slug);
  const composePath = join(dir, "docker-compose.yml");
  const envPath = join(dir, ".env");
  writeFileAtomic(composePath, compose, 0o644);
  // the process umask is private; a compose file is not a secret
  chmodSync(composePath, 0o644);
  writeFileAtomic(envPath, envText(env), 0o600);
  return [composePath, envPath];
}
