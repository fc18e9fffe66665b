/**
 * The apps directory: each `<apps_dir>/<slug>/docker-compose.yml` (with an optional `.env`) is one app. Writes of the
 * pair go through a journal in data_dir, so a crash between the two renames is completed on the next start and the
 * reconciler never sees a half-written app.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../lib/crypto";
import { ensurePrivateDir, writeFileAtomic } from "../../lib/fs";
import { isSlug } from "../../shared/slug";

export const COMPOSE_FILE = "docker-compose.yml";
export const ENV_FILE = ".env";

/** The desired content of one app. */
export interface AppFiles {
  compose: string;
  env: string;
  /** sha256 over compose and .env: what identifies a version. */
  hash: string;
}

/** Identity of an app's content. */
export function contentHash(compose: string, env: string): string {
  return sha256Hex(`${compose}\u0000${env}`);
}

interface Pending {
  slug: string;
  compose: string;
  env: string;
}

/** Access to the apps directory. */
export function createAppFiles(appsDir: string, dataDir: string) {
  const journalDir = join(dataDir, "pending-writes");
  const dir = (slug: string) => join(appsDir, slug);

  const writePair = (p: Pending) => {
    const d = dir(p.slug);
    ensurePrivateDir(d);
    writeFileAtomic(join(d, ENV_FILE), p.env, 0o600);
    writeFileAtomic(join(d, COMPOSE_FILE), p.compose, 0o644);
  };

  return {
    appsDir,
    dir,
    composePath: (slug: string) => join(dir(slug), COMPOSE_FILE),

    /** Slugs of every directory holding a compose file; other entries are ignored. */
    list(): string[] {
      if (!existsSync(appsDir)) return [];
      return readdirSync(appsDir, { withFileTypes: true })
        .filter((e) => e.isDirectory() && isSlug(e.name) && existsSync(join(appsDir, e.name, COMPOSE_FILE)))
        .map((e) => e.name)
        .sort();
    },

    /** Directories holding a compose file whose name is not a slug: never apps, each worth one warning. */
    ignored(): string[] {
      if (!existsSync(appsDir)) return [];
      return readdirSync(appsDir, { withFileTypes: true })
        .filter((e) => e.isDirectory() && !isSlug(e.name) && existsSync(join(appsDir, e.name, COMPOSE_FILE)))
        .map((e) => e.name)
        .sort();
    },

    /** The app's files, or null when it has no compose file. */
    read(slug: string): AppFiles | null {
      const path = join(dir(slug), COMPOSE_FILE);
      if (!existsSync(path) || !statSync(path).isFile()) return null;
      const compose = readFileSync(path, "utf8");
      const envPath = join(dir(slug), ENV_FILE);
      const env = existsSync(envPath) ? readFileSync(envPath, "utf8") : "";
      return { compose, env, hash: contentHash(compose, env) };
    },

    /** Write compose and .env together (journal first, so a crash midway is finished on the next start). */
    write(slug: string, compose: string, env: string): AppFiles {
      ensurePrivateDir(journalDir);
      const journal = join(journalDir, `${slug}.json`);
      writeFileAtomic(journal, JSON.stringify({ slug, compose, env } satisfies Pending), 0o600);
      writePair({ slug, compose, env });
      rmSync(journal, { force: true });
      return { compose, env, hash: contentHash(compose, env) };
    },

    /** Finish writes a crash interrupted; returns the slugs completed. */
    recover(): string[] {
      if (!existsSync(journalDir)) return [];
      const done: string[] = [];
      for (const name of readdirSync(journalDir)) {
        const path = join(journalDir, name);
        if (!name.endsWith(".json")) {
          rmSync(path, { force: true });
          continue;
        }
        try {
          const p = JSON.parse(readFileSync(path, "utf8")) as Pending;
          if (isSlug(p.slug)) {
            writePair(p);
            done.push(p.slug);
          }
        } catch {
          // an unreadable journal was never acted on: the old files stand
        }
        rmSync(path, { force: true });
      }
      return done;
    },

    /** Remove an app's directory (its compose file and .env; bind-mounted data under it goes too). */
    remove(slug: string): void {
      rmSync(dir(slug), { recursive: true, force: true });
    },
  };
}

export type AppFilesStore = ReturnType<typeof createAppFiles>;
