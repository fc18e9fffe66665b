/**
 * Volumes: a tar of every named volume and bind mount of the service, read through the Engine API's archive endpoint
 * (the engine makes the tar: no shell or tar needed in the image, so distroless images back up too). The mounts go
 * into one archive, each under a top-level directory named after its destination (`/var/lib/data` ->
 * `var_lib_data`), written one after the other.
 *
 * Restore (`needsStop`): each top-level directory is extracted into its mount's destination with PUT archive while
 * the service is stopped. Extraction writes over what is there: files created after the backup stay (the archive
 * endpoint cannot delete). A directory in the archive that no mount of the service matches fails the restore before
 * anything is written for it; mounts the archive does not mention are left alone. An upload that holds one mount's
 * files at its root (`ctl.mount`, told apart in volume-layout.ts) is extracted whole into that mount.
 */
import { posix } from "node:path";
import { collector } from "../archive/gunzip";
import type { BackupContainer, OpControl, RestoreControl } from "../types";
import { type AppStrategy, metered, progress, requireStopped, type StrategyDeps, StrategyError } from "./run";
import { END_OF_ARCHIVE, entryHeader, padding, readTar, streamOf, tarEntries } from "./tar";

/** The top-level directory a mount's files go under in the archive. */
export function mountKey(destination: string): string {
  return destination.replace(/^\/+|\/+$/g, "").replace(/\//g, "_") || "_root";
}

/** Whether a mount is one the volume strategy backs up and restores (a named volume or a bind mount, not a tmpfs). */
export const isVolumeMount = (m: { type: string }) => m.type === "volume" || m.type === "bind";

/** The mounts a volume backup covers, by destination, checked for clashing keys. */

export function volumeMounts(c: BackupContainer): Array<{ key: string; destination: string }> {
  const mounts = c.mounts
    .filter(isVolumeMount)
    .map((m) => ({ key: mountKey(m.destination), destination: m.destination }))
    .sort((a, b) => a.destination.localeCompare(b.destination));
  const seen = new Set<string>();
  for (const m of mounts) {
    if (seen.has(m.key)) throw new StrategyError(`volume: two mounts of ${c.name} map to the archive directory ${m.key}`);
    seen.add(m.key);
  }
  return mounts;
}

/** Rename an entry's leading component (`from`, the destination's base name) to `to`. */
function rebase(name: string, from: string, to: string): string | null {
  const clean = name.replace(/^\.\//, "");
  if (clean === from || clean === `${from}/`) return clean.replace(from, to);
  if (clean.startsWith(`${from}/`)) return to + clean.slice(from.length);
  return null;
}

/** The volume strategy. */
export function volumeStrategy(deps: StrategyDeps): AppStrategy {
  const { engine } = deps;
  return {
    id: "volume",
    extension: ".tar.gz",
    needsStop: true,
    async dump(c: BackupContainer, ctl: OpControl) {
      const mounts = volumeMounts(c);
      if (mounts.length === 0) throw new StrategyError(`volume: ${c.name} has no named volumes or bind mounts`);
      const tick = progress(ctl);
      // the archive stream's chunks are garbage once gzipped: collected every few MiB (see archive/gunzip.ts)
      const collect = collector();
      async function* all(): AsyncGenerator<Uint8Array> {
        for (const m of mounts) {
          const base = posix.basename(m.destination) || "/";
          const tar = await engine.getArchive(c.id, m.destination, ctl.signal);
          // a mount inside this one (/data and /data/cache) is its own directory of the archive: not copied twice
          const inner = mounts
            .filter((o) => o.destination.startsWith(`${m.destination.replace(/\/+$/, "")}/`))
            .map((o) => `${m.key}/${o.destination.slice(m.destination.replace(/\/+$/, "").length + 1)}`);
          for await (const { entry: e, body } of tarEntries(tar)) {
            const name = rebase(e.name, base, m.key);
            if (name === null) throw new StrategyError(`volume: unexpected entry ${e.name} in the archive of ${m.destination}`);
            if (inner.some((p) => name === p || name.startsWith(`${p.replace(/\/+$/, "")}/`))) continue;
            const link = e.type === "1" ? (rebase(e.linkname, base, m.key) ?? e.linkname) : e.linkname;
            yield entryHeader(e, name, link);
            for await (const chunk of body) {
              tick(chunk.length);
              collect(chunk.length);
              yield chunk;
            }
            if (e.size && (e.type === "0" || e.type === "\0" || e.type === "7")) yield new Uint8Array(padding(e.size));
          }
        }
        yield END_OF_ARCHIVE;
      }
      return streamOf(all());
    },
    async restore(c: BackupContainer, data: ReadableStream<Uint8Array>, ctl: RestoreControl) {
      await requireStopped(engine, c, "volume");
      const byKey = new Map(volumeMounts(c).map((m) => [m.key, m.destination]));
      if (ctl.mount !== undefined) {
        if (![...byKey.values()].includes(ctl.mount))
          throw new StrategyError(`volume restore: ${ctl.mount} is no mount of ${c.name}`);
        // names are relative to the mount (`./a`), vetted as they stream: the engine extracts them in place
        return engine.putArchive(c.id, ctl.mount, metered(data, ctl), ctl.signal);
      }
      let current: { key: string; writer: WritableStreamDefaultWriter<Uint8Array>; done: Promise<void> } | null = null;
      const finish = async () => {
        if (!current) return;
        const { writer, done } = current;
        current = null;
        await Promise.race([writer.write(END_OF_ARCHIVE).then(() => writer.close()), done]);
        await done;
      };
      try {
        await readTar(metered(data, ctl), async (e, body) => {
          const key = e.name.replace(/^\.\//, "").split("/")[0];
          const destination = byKey.get(key);
          if (destination === undefined) {
            throw new StrategyError(`volume restore: the archive's ${key}/ matches no mount of ${c.name}`);
          }
          if (current?.key !== key) {
            await finish();
            const pipe = new TransformStream<Uint8Array, Uint8Array>();
            const parent = posix.dirname(destination);
            const done = engine.putArchive(c.id, parent, pipe.readable, ctl.signal);
            done.catch(() => {});
            current = { key, writer: pipe.writable.getWriter(), done };
          }
          const cur = current!;
          const base = posix.basename(destination);
          const name = rebase(e.name, key, base)!;
          const link = e.type === "1" ? (rebase(e.linkname, key, base) ?? e.linkname) : e.linkname;
          const write = (b: Uint8Array) => Promise.race([cur.writer.write(b), cur.done.then(() => undefined)]);
          await write(entryHeader(e, name, link));
          for await (const chunk of body) await write(chunk);
          if (e.size && (e.type === "0" || e.type === "\0" || e.type === "7")) await write(new Uint8Array(padding(e.size)));
        });
        await finish();
      } catch (e) {
        if (current) (current as { writer: WritableStreamDefaultWriter<Uint8Array> }).writer.abort(e).catch(() => {});
        throw e;
      }
    },
  };
}
