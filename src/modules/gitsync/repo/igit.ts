/** isomorphic-git, loaded on first use so a server without git sync never pays for it (see DESIGN: lazy heavy parts). */
import * as fs from "node:fs";

type Git = typeof import("isomorphic-git");
let loaded: Promise<Git> | null = null;

/** The isomorphic-git module. */
export function loadGit(): Promise<Git> {
  loaded ??= import("isomorphic-git").then((m) => (m.default ?? m) as Git);
  return loaded;
}

/** The fs isomorphic-git reads and writes with. */
export const gitFs = fs;

/** Where one repository lives: `dir` is the work tree (apps_dir), `gitdir` its object store and refs. */
export interface RepoPaths {
  dir: string;
  gitdir: string;
}
