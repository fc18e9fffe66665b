/**
 * Which layout an uploaded volume archive is in, told from its names as the vetting pass reads them, before the 202:
 * Sundeck's own (a top-level entry per mount, named by `mountKey`), or one mount's files at the archive's root, as
 * `tar -C DIR -c .` makes them (every name `.` or `./...`), restored into the service's only mount. Sundeck never
 * writes a name starting with `./`, so one such name makes a root archive; an archive without one is read per mount
 * only when every top-level name is a mount of the service, and refused otherwise (see strategies/README.md).
 */
import { badRequest } from "../../../lib/errors";
import { showName } from "../archive/refused";
import type { TarEntry } from "../archive/vet";
import type { BackupContainer } from "../types";
import { volumeMounts } from "./volume";

/** Most distinct top-level names kept: more than a service has mounts, so past it the archive is not per mount. */
const MAX_TOPS = 256;
/** Top-level names shown in a refusal. */
const SHOWN = 5;

/** What the layout is told by: gathered entry by entry, holding at most `MAX_TOPS` names. */
export interface VolumeShape {
  /** Some name is `.` or starts with `./` (a tar of a directory's `.`). */
  dotted: boolean;
  /** The first entry naming the root itself (`.`, `./`) that is not a directory. */
  rootNonDir: string | null;
  /** Distinct first components of names not starting with `./`, in archive order. */
  tops: Set<string>;
  /** More than `MAX_TOPS` distinct first components. */
  moreTops: boolean;
}

/** A shape to fill from the vetting pass (`add` as its `onEntry`). */
export function volumeShape(): { shape: VolumeShape; add: (e: TarEntry) => void } {
  const shape: VolumeShape = { dotted: false, rootNonDir: null, tops: new Set(), moreTops: false };
  const add = (e: TarEntry) => {
    const segments = e.name.split("/");
    if (segments.every((s) => s === "." || s === "")) {
      if (e.type !== "directory") shape.rootNonDir ??= e.name;
    }
    if (segments[0] === ".") {
      shape.dotted = true;
      return;
    }
    if (shape.tops.has(segments[0])) return;
    if (shape.tops.size < MAX_TOPS) shape.tops.add(segments[0]);
    else shape.moreTops = true;
  };
  return { shape, add };
}

/** What the restore of this archive is told: the mount a root archive goes into, or nothing for one per mount. */
export function volumeUpload(shape: VolumeShape, c: BackupContainer): { mount?: string } {
  const mounts = volumeMounts(c);
  if (mounts.length === 0) throw badRequest(`${c.name} has no named volumes or bind mounts to restore into`);
  const dirs = mounts.map((m) => `${m.key}/ for ${m.destination}`).join(", ");
  if (shape.dotted) {
    // the engine would replace the mount's directory by this file, dropping what it holds
    if (shape.rootNonDir !== null)
      throw badRequest(`archive entry ${showName(shape.rootNonDir)}: the archive's root is not a directory`);
    if (mounts.length > 1) {
      throw badRequest(
        `the archive holds files at its root (names start with ./) and ${c.name} has several mounts: put each mount's files under its directory (${dirs})`,
      );
    }
    return { mount: mounts[0].destination };
  }
  const keys = new Set(mounts.map((m) => m.key));
  const strays = [...shape.tops].filter((t) => !keys.has(t));
  if (strays.length > 0 || shape.moreTops) {
    const shown = strays.slice(0, SHOWN).map(showName).join(", ") + (strays.length > SHOWN || shape.moreTops ? ", …" : "");
    throw badRequest(
      `the archive's top-level ${shown} match no mount of ${c.name} (${dirs}) and its names do not start with ./: make an archive of one mount's files with tar -C DIR -c .`,
    );
  }
  return {};
}
