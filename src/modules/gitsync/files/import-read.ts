/**
 * Reading what came from the remote: every `<slug>/sundeck.yml` and `_global.yml` under apps_dir, parsed strictly
 * and checked against the schema. One bad file refuses the whole import, with every problem named.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isSlug } from "../../../shared/slug";
import { allowedOnDisk, GLOBAL_FILE, SIDECAR_FILE } from "./paths";
import { checkShape, Global, type GlobalData, Sidecar, type SidecarData } from "./schema";
import { MAX_FILE_BYTES, parseYaml, SyncFileError } from "./yaml";

/** The sync files of a tree, checked. An app without a sidecar is absent (absent is "no change", never "delete all"). */
export interface ParsedImport {
  apps: Record<string, SidecarData>;
  global: GlobalData | null;
}

/** The files could not be imported; `problems` name each file and key. */
export class ImportRefused extends Error {
  constructor(readonly problems: string[]) {
    super(`git sync import refused: ${problems.join("; ")}`);
  }
}

const present = (path: string) => {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
};

/**
 * The text of a plain file (no symlink, no second name, at most 1 MiB), checked again on the open descriptor so a
 * file swapped for a link between the check and the read is refused too.
 */
function readPlain(root: string, rel: string): string {
  const refused = new SyncFileError(`${rel}: not a plain file (a symlink, a link or a directory)`);
  if (!allowedOnDisk(root, rel)) throw refused;
  let fd: number;
  try {
    fd = openSync(join(root, rel), constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    throw refused;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.nlink !== 1) throw refused;
    if (st.size > MAX_FILE_BYTES) throw new SyncFileError(`${rel}: larger than 1 MiB`);
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

/** Read one file: a plain file, strict YAML, the schema. */
function readOne<T>(root: string, rel: string, check: (data: unknown, file: string) => T): T {
  return check(parseYaml(readPlain(root, rel), rel), rel);
}

/** A local target has no S3 fields; one with them is a mistake worth naming. */
function checkSidecar(data: unknown, file: string): SidecarData {
  const s = checkShape(Sidecar, data, file);
  s.backups.forEach((b, i) => {
    if (b.target.kind === "local" && Object.keys(b.target).length > 1)
      throw new SyncFileError(`${file}: backups[${i}].target: a local target has no other fields`);
  });
  return s;
}

/** Parse and check the sidecars and `_global.yml` under `appsDir`; throws ImportRefused listing every problem. */
export function readImport(appsDir: string): ParsedImport {
  const out: ParsedImport = { apps: {}, global: null };
  const problems: string[] = [];
  const attempt = (f: () => void) => {
    try {
      f();
    } catch (e) {
      if (!(e instanceof SyncFileError)) throw e;
      problems.push(e.message);
    }
  };
  for (const e of readdirSync(appsDir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (!e.isDirectory() || !isSlug(e.name)) continue;
    const rel = `${e.name}/${SIDECAR_FILE}`;
    if (!present(join(appsDir, rel))) continue;
    attempt(() => {
      out.apps[e.name] = readOne(appsDir, rel, checkSidecar);
    });
  }
  if (present(join(appsDir, GLOBAL_FILE)))
    attempt(() => {
      out.global = readOne(appsDir, GLOBAL_FILE, (d, f) => checkShape(Global, d, f));
    });
  if (problems.length) throw new ImportRefused(problems);
  return out;
}
