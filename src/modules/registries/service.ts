/**
 * Registry credentials: stored sealed (AES-256-GCM), never returned, never in activity snapshots (name and host only).
 * At pull time they become a throwaway docker config directory that exists only for that pull.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asc, eq } from "drizzle-orm";
import type { Db } from "../../db";
import { registries } from "../../db/schema";
import type { Secrets } from "../../lib/crypto";
import { badRequest, conflict, notFound } from "../../lib/errors";
import { writeFileAtomic } from "../../lib/fs";
import { registrySnapshot } from "../../lib/redact";
import { type Clock, iso } from "../../lib/time";
import type { Actor } from "../activity/model";
import type { Activity } from "../activity/service";

const NAME = /^[a-z0-9]+([._-][a-z0-9]+)*$/;
/** Docker Hub's key in a docker config. */
const DOCKER_HUB = "https://index.docker.io/v1/";

export type RegistryRow = typeof registries.$inferSelect;

/** The wire form: never the password. */
export function registryJson(r: RegistryRow) {
  return { id: r.id, name: r.name, url: r.url, username: r.username, created_at: r.createdAt, updated_at: r.updatedAt };
}

/** The host a registry URL names (`ghcr.io`, `registry.example.com:5000`); Docker Hub's for docker.io. */
export function registryHost(url: string): string {
  const host = registrySnapshot({ name: "", url }).host.toLowerCase();
  return host === "docker.io" || host === "index.docker.io" || host === "registry-1.docker.io" ? "docker.io" : host;
}

/** The registry host of an image reference (`docker.io` when it names none). */
export function imageRegistry(image: string): string {
  const first = image.split("/")[0];
  if (image.includes("/") && (first.includes(".") || first.includes(":") || first === "localhost")) return first.toLowerCase();
  return "docker.io";
}

interface Input {
  name?: unknown;
  url?: unknown;
  username?: unknown;
  password?: unknown;
}

function checkInput(i: Input, creating: boolean) {
  if (typeof i.name !== "string" || !NAME.test(i.name) || i.name.length > 63) {
    throw badRequest("name must be 1 to 63 lowercase letters, digits, '.', '_' or '-'");
  }
  if (typeof i.url !== "string" || !i.url.trim() || i.url.length > 255 || /\s/.test(i.url))
    throw badRequest("url must be a registry host or URL");
  try {
    const u = new URL(i.url.includes("://") ? i.url : `https://${i.url}`);
    if (!["http:", "https:"].includes(u.protocol) || !u.hostname) throw new Error();
  } catch {
    throw badRequest("url must be a registry host or URL");
  }
  if (typeof i.username !== "string" || !i.username || i.username.length > 255) throw badRequest("username is required");
  if (creating || i.password !== undefined) {
    if (typeof i.password !== "string" || !i.password || i.password.length > 4096) throw badRequest("password is required");
  }
  return { name: i.name, url: i.url.trim(), username: i.username, password: i.password as string | undefined };
}

export interface RegistryDeps {
  db: Db;
  clock: Clock;
  secrets: Secrets;
  activity: Activity;
}

/** Build the registry service. */
export function createRegistries({ db, clock, secrets, activity }: RegistryDeps) {
  const byId = (id: number) => db.orm.select().from(registries).where(eq(registries.id, id)).get();
  const byName = (name: string) => db.orm.select().from(registries).where(eq(registries.name, name)).get();
  const record = (actor: Actor, action: string, r: RegistryRow, before: RegistryRow | null, after: RegistryRow | null) =>
    activity.record({
      actor,
      category: "registry",
      action,
      target: r.name,
      summary: `${actor.name} ${action.replace("registry_", "")} registry ${r.name} (${registryHost(r.url)})`,
      before: before ? registrySnapshot(before) : null,
      after: after ? registrySnapshot(after) : null,
    });

  return {
    list: () => db.orm.select().from(registries).orderBy(asc(registries.name)).all().map(registryJson),

    create(input: Input, actor: Actor) {
      const i = checkInput(input, true);
      const now = iso(clock.now());
      return db.tx(() => {
        if (byName(i.name)) throw conflict(`registry ${i.name} already exists`);
        const r = db.orm
          .insert(registries)
          .values({
            name: i.name,
            url: i.url,
            username: i.username,
            passwordSealed: secrets.seal(i.password!),
            createdAt: now,
            updatedAt: now,
          })
          .returning()
          .get();
        record(actor, "registry_created", r, null, r);
        return registryJson(r);
      });
    },

    /** Replace name, url and username; an omitted password keeps the stored one. */
    update(id: number, input: Input, actor: Actor) {
      const i = checkInput(input, false);
      return db.tx(() => {
        const before = byId(id);
        if (!before) throw notFound();
        const clash = byName(i.name);
        if (clash && clash.id !== id) throw conflict(`registry ${i.name} already exists`);
        const r = db.orm
          .update(registries)
          .set({
            name: i.name,
            url: i.url,
            username: i.username,
            ...(i.password !== undefined ? { passwordSealed: secrets.seal(i.password) } : {}),
            updatedAt: iso(clock.now()),
          })
          .where(eq(registries.id, id))
          .returning()
          .get();
        record(actor, "registry_updated", r, before, r);
        return registryJson(r);
      });
    },

    remove(id: number, actor: Actor): void {
      db.tx(() => {
        const r = byId(id);
        if (!r) throw notFound();
        db.orm.delete(registries).where(eq(registries.id, id)).run();
        record(actor, "registry_removed", r, r, null);
      });
    },

    /** Names that do not exist among the stored registries. */
    unknown: (names: string[]) => names.filter((n) => !byName(n)),

    /**
     * A temporary DOCKER_CONFIG directory holding credentials for the named registries, and its cleanup. Returns
     * null when none of them exist.
     */
    dockerConfig(names: string[]): { dir: string; cleanup: () => void } | null {
      const auths: Record<string, { auth: string }> = {};
      for (const n of new Set(names)) {
        const r = byName(n);
        if (!r) continue;
        const host = registryHost(r.url);
        auths[host === "docker.io" ? DOCKER_HUB : host] = {
          auth: Buffer.from(`${r.username}:${secrets.open(r.passwordSealed)}`).toString("base64"),
        };
      }
      if (Object.keys(auths).length === 0) return null;
      const dir = mkdtempSync(join(tmpdir(), "sundeck-docker-config-"));
      writeFileAtomic(join(dir, "config.json"), JSON.stringify({ auths }), 0o600);
      return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
    },
  };
}

export type Registries = ReturnType<typeof createRegistries>;
