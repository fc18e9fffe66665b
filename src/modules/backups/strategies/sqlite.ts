/**
 * SQLite: a consistent copy made by SQLite's own online backup (`sqlite3 <db> ".backup <tmp>"` in the container,
 * never a raw copy of a live file), streamed out through the archive endpoint, the temp copy removed after. The
 * database is the file the label `sundeck.backup.path` names: guessing among *.db files of a volume would back up
 * the wrong file silently, so the label is required.
 *
 * Restore (`needsStop`): the file is written over the database while the service is stopped, with the owner of the
 * file it replaces; a `-wal` / `-shm` left beside it is truncated so SQLite does not replay an old log onto the new
 * database. The image needs the `sqlite3` CLI for backups, nothing for restores.
 */
import { posix } from "node:path";
import type { BackupContainer, OpControl } from "../types";
import {
  type AppStrategy,
  execText,
  firstFile,
  ownerOf,
  PATH_LABEL,
  progress,
  requireStopped,
  type StrategyDeps,
  StrategyError,
  spool,
} from "./run";
import { concatStreams, END_OF_ARCHIVE, fileHeader, padding } from "./tar";

/** The database path from the container's labels. */
export function sqlitePath(info: any, c: BackupContainer): string {
  const path = info?.Config?.Labels?.[PATH_LABEL];
  if (!path || !posix.isAbsolute(path)) {
    throw new StrategyError(`sqlite: set the label ${PATH_LABEL} on service ${c.service} to the database's absolute path`);
  }
  return path;
}

/** The sqlite strategy. */
export function sqliteStrategy(deps: StrategyDeps): AppStrategy {
  const { engine } = deps;
  return {
    id: "sqlite",
    extension: ".sqlite.gz",
    needsStop: true,
    async dump(c: BackupContainer, ctl: OpControl) {
      const db = sqlitePath(await engine.inspect(c.id), c);
      const tmp = `/tmp/sundeck-backup-${crypto.randomUUID()}.sqlite`;
      const cleanup = () => execText(engine, c, "rm", ["rm", "-f", tmp]).catch(() => {});
      try {
        await execText(engine, c, "sqlite3 .backup", ["sqlite3", db, `.backup '${tmp}'`]);
        const body = firstFile(await engine.getArchive(c.id, tmp, ctl.signal)).getReader();
        const tick = progress(ctl);
        return new ReadableStream<Uint8Array>({
          async pull(ctrl) {
            try {
              const r = await body.read();
              if (r.done) {
                await cleanup();
                ctrl.close();
              } else {
                tick(r.value.length);
                ctrl.enqueue(r.value);
              }
            } catch (e) {
              await cleanup();
              ctrl.error(e);
            }
          },
          async cancel(reason) {
            await body.cancel(reason).catch(() => {});
            await cleanup();
          },
        });
      } catch (e) {
        await cleanup();
        throw e;
      }
    },
    async restore(c: BackupContainer, data: ReadableStream<Uint8Array>, ctl: OpControl) {
      const db = sqlitePath(await requireStopped(engine, c, "sqlite"), c);
      const dir = posix.dirname(db);
      const name = posix.basename(db);
      const owner = (await ownerOf(engine, c.id, db)) ?? (await ownerOf(engine, c.id, dir));
      if (!owner) throw new StrategyError(`sqlite restore: ${dir} does not exist in ${c.name}`);
      const stale: Uint8Array[] = [];
      for (const suffix of ["-wal", "-shm", "-journal"]) {
        const o = await ownerOf(engine, c.id, `${db}${suffix}`);
        if (o) stale.push(fileHeader(`${name}${suffix}`, 0, o));
      }
      const spooled = await spool(data, deps.tmpDir, ctl);
      try {
        const head = fileHeader(name, spooled.size, { ...owner, mode: owner.mode & 0o666 || 0o644 });
        const parts: Array<Uint8Array | ReadableStream<Uint8Array>> = [
          head,
          Bun.file(spooled.path).stream(),
          new Uint8Array(padding(spooled.size)),
          ...stale,
          END_OF_ARCHIVE,
        ];
        await engine.putArchive(c.id, dir, concatStreams(parts), ctl.signal);
      } finally {
        spooled.done();
      }
    },
  };
}
