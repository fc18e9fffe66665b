/**
 * Writing the export into apps_dir: each live app's sidecar, `_global.yml` and the `.gitignore`, each atomically
 * (temp file, rename) and only when its bytes change, so an unchanged state leaves nothing to commit.
 */
import { lstatSync, readdirSync, readFileSync, rmdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Ctx } from "../../../context";
import { ensurePrivateDir, writeFileAtomic } from "../../../lib/fs";
import { isSlug } from "../../../shared/slug";
import { COMPOSE_FILE } from "../../apps/files";
import { globalOf, sidecarOf } from "./export";
import { gitignore } from "./gitignore";
import { allowedOnDisk, GITIGNORE_FILE, GLOBAL_FILE, SIDECAR_FILE } from "./paths";

const lstatOrNull = (p: string) => {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
};

/** Put `text` at `rel` unless it is there already; returns whether the file changed. */
function put(root: string, rel: string, text: string): boolean {
  const path = join(root, rel);
  const st = lstatOrNull(path);
  if (st?.isDirectory()) throw new Error(`${rel} is a directory`);
  if (st?.isFile() && st.nlink === 1 && readFileSync(path, "utf8") === text) return false;
  // a symlink or a second name is replaced by a plain file, never written through
  if (st && !st.isFile()) rmSync(path, { force: true });
  writeFileAtomic(path, text, 0o600);
  return true;
}

/**
 * Write the export under `appsDir`; returns the paths (relative, sorted) written or removed. An app directory with
 * a compose file but no live app (pulled, not yet deployed and imported) keeps the sidecar it has: that sidecar is
 * the remote's and waits for its import. A directory without a compose file (the app is gone) loses its sidecar.
 */
export function writeExport(ctx: Ctx, appsDir: string): string[] {
  const log = ctx.logs.logger("gitsync");
  ensurePrivateDir(appsDir);
  const changed: string[] = [];
  const attempt = (rel: string, f: () => boolean) => {
    try {
      if (f()) changed.push(rel);
    } catch (e) {
      log.warn("git sync export skipped a file", { path: rel, error: (e as Error).message });
    }
  };
  attempt(GITIGNORE_FILE, () => put(appsDir, GITIGNORE_FILE, gitignore()));
  attempt(GLOBAL_FILE, () => put(appsDir, GLOBAL_FILE, globalOf(ctx)));
  for (const e of readdirSync(appsDir, { withFileTypes: true })) {
    if (!e.isDirectory() || !isSlug(e.name)) continue;
    const rel = `${e.name}/${SIDECAR_FILE}`;
    if (allowedOnDisk(appsDir, `${e.name}/${COMPOSE_FILE}`)) {
      const app = ctx.appRepo.bySlug(e.name);
      if (app && !app.removedAt) attempt(rel, () => put(appsDir, rel, sidecarOf(ctx, e.name)));
    } else if (lstatOrNull(join(appsDir, rel))) {
      attempt(rel, () => {
        rmSync(join(appsDir, rel), { force: true });
        try {
          rmdirSync(join(appsDir, e.name));
        } catch {
          // not empty: other files of the directory stay
        }
        return true;
      });
    }
  }
  return changed.sort();
}
