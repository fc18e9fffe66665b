/**
 * The container an upload-restore goes to when the form names none: the one service with a config of the strategy,
 * else the only service it fits (volume: the only service with named volumes or bind mounts; the others: the only
 * service detected for the strategy). Anything else is a 400 naming the candidates: nothing is restored into a guess.
 */
import { badRequest, conflict, HttpError } from "../../lib/errors";
import type { BackupDeps } from "./deps";
import { isVolumeMount } from "./strategies/volume";
import type { BackupContainer } from "./types";

/** Sorted distinct service names. */
const distinct = (names: string[]) => [...new Set(names)].sort();

/** The 400 of several candidates: `the app has several services with mounts (db, web): name one in container`. */
const several = (what: string, services: string[]) =>
  badRequest(`the app has several services with ${what} (${services.join(", ")}): name one in container`);

/** The container of `slug` an upload of `strategy` restores into; `stopped`: a stopped container will do. */
export async function uploadTarget(
  d: Pick<BackupDeps, "repo" | "containers" | "detect">,
  slug: string,
  strategy: string,
  stopped: boolean,
): Promise<BackupContainer> {
  const find = (service: string) =>
    d.containers.find(slug, service, { stopped }).catch((e) => {
      throw e instanceof HttpError ? e : conflict((e as Error).message);
    });
  const configured = distinct(
    d.repo
      .configs(slug)
      .filter((c) => c.strategy === strategy)
      .map((c) => c.service ?? ""),
  );
  if (configured.length === 1) return find(configured[0]);
  if (configured.length > 1) throw several(`${strategy} configs`, configured);
  if (strategy === "volume") {
    // what the volume strategy restores into: the containers' own mounts, bind mounts included
    const withMounts = ((await d.containers.perService?.(slug)) ?? []).filter((c) => c.mounts.some(isVolumeMount));
    if (withMounts.length === 1) return withMounts[0];
    if (withMounts.length === 0) throw badRequest("no service of the app has named volumes or bind mounts to restore into");
    throw several("mounts", distinct(withMounts.map((c) => c.service || c.name)));
  }
  const detected = distinct(((await d.detect?.(slug)) ?? []).filter((x) => x.strategy === strategy).map((x) => x.service));
  if (detected.length === 1) return find(detected[0]);
  if (detected.length === 0) {
    throw badRequest(`container is required: the app has no config with strategy ${strategy} and no service detected for it`);
  }
  throw several(`strategy ${strategy}`, detected);
}
