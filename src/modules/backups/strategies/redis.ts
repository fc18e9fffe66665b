/**
 * Redis (and Valkey, KeyDB): a fresh RDB made by the server for this backup, streamed out with `redis-cli --rdb -`
 * (the replication SYNC: no file left in the container, no BGSAVE to wait for). Restore writes the RDB over the
 * server's dump file while the service is stopped (`needsStop`): Redis loads it on start. A running Redis would
 * overwrite the file at shutdown, so restoring into a running container is refused. The password, when the
 * environment (REDIS_PASSWORD), the command (`--requirepass`) or the file REDIS_PASSWORD_FILE names (read in the
 * container) has one, travels as REDISCLI_AUTH, never in argv.
 *
 * Redis with `appendonly yes` loads the AOF, not the RDB, on start (7.0 and later: the files of its AOF directory,
 * even when they hold nothing): the restore writes the RDB there too, as the base of a new manifest with an empty
 * increment (the old increment would be replayed over it, and appended to), so either setting loads the archive. A
 * Redis 6 AOF (one appendonly.aof file) is refused.
 */
import { posix } from "node:path";
import type { BackupContainer, OpControl } from "../types";
import {
  type AppStrategy,
  execOk,
  execOutput,
  ownerOf,
  PATH_LABEL,
  requireStopped,
  type StrategyDeps,
  StrategyError,
  spool,
} from "./run";
import { secretOf, withSecret } from "./secret";
import { concatStreams, END_OF_ARCHIVE, fileHeader, padding } from "./tar";

/** `redis-cli --rdb -` (7.0) writes the 40-byte EOF mark of the diskless transfer after the RDB: held back, dropped. */
const MARK = 40;

/** The client of Redis and of its forks; Valkey and KeyDB images name theirs after themselves. */
const CLIS = ["redis-cli", "valkey-cli", "keydb-cli"];

/** The redis strategy. */
export function redisStrategy(deps: StrategyDeps): AppStrategy {
  return {
    id: "redis",
    extension: ".rdb.gz",
    needsStop: true,
    async dump(c: BackupContainer, ctl: OpControl) {
      const info = await deps.engine.inspect(c.id);
      const arg = commandArg(info, "requirepass");
      const found = secretOf(c, "REDIS_PASSWORD");
      const password = found && "value" in found ? found : arg ? { value: arg } : found;
      let cli = "redis-cli";
      for (const name of CLIS) {
        if (await execOk(deps.engine, c, [name, "--version"])) {
          cli = name;
          break;
        }
      }
      const { cmd, env } = withSecret([cli, "--rdb", "-"], [], "REDISCLI_AUTH", password);
      const out = await execOutput(deps.engine, c, `${cli} --rdb`, cmd, env, ctl);
      return out.pipeThrough(dropEofMark());
    },
    async restore(c: BackupContainer, data: ReadableStream<Uint8Array>, ctl: OpControl) {
      const info = await requireStopped(deps.engine, c, "redis");
      const file = rdbPath(info);
      const dir = posix.dirname(file);
      const aofName = commandArg(info, "appendfilename") ?? "appendonly.aof";
      const aofDir = commandArg(info, "appenddirname") ?? "appendonlydir";
      const aofOwner = await ownerOf(deps.engine, c.id, posix.join(dir, aofDir));
      if (!aofOwner && (await ownerOf(deps.engine, c.id, posix.join(dir, aofName)))) {
        throw new StrategyError(
          `redis restore: ${dir} holds a Redis 6 AOF (${aofName}), which Redis would load instead of the RDB`,
        );
      }
      const owner = (await ownerOf(deps.engine, c.id, file)) ?? (await ownerOf(deps.engine, c.id, dir));
      if (!owner) throw new StrategyError(`redis restore: ${dir} does not exist in ${c.name}`);
      const spooled = await spool(data, deps.tmpDir, ctl);
      try {
        const rdb = () => Bun.file(spooled.path).stream();
        const parts = fileEntry(posix.basename(file), spooled.size, { ...owner, mode: 0o644 }, rdb());
        if (aofOwner) {
          const o = { uid: aofOwner.uid, gid: aofOwner.gid, mode: 0o644 };
          const base = `${aofName}.1.base.rdb`;
          const incr = `${aofName}.1.incr.aof`;
          const manifest = new TextEncoder().encode(`file ${base} seq 1 type b\nfile ${incr} seq 1 type i\n`);
          parts.push(
            ...fileEntry(`${aofDir}/${base}`, spooled.size, o, rdb()),
            ...fileEntry(`${aofDir}/${incr}`, 0, o, new Uint8Array(0)),
            ...fileEntry(`${aofDir}/${aofName}.manifest`, manifest.length, o, manifest),
          );
        }
        const tar = concatStreams([...parts, END_OF_ARCHIVE]);
        await deps.engine.putArchive(c.id, dir, tar, ctl.signal);
      } finally {
        spooled.done();
      }
    },
  };
}

/** Where the server keeps its RDB: the path label, else `--dir` / `--dbfilename` of its command, else its cwd. */
export function rdbPath(info: any): string {
  const label = info?.Config?.Labels?.[PATH_LABEL];
  if (label) return label;
  const arg = (name: string) => commandArg(info, name);
  const dir = arg("dir") ?? (info?.Config?.WorkingDir || "/data");
  return posix.join(
    posix.isAbsolute(dir) ? dir : posix.join(info?.Config?.WorkingDir || "/", dir),
    arg("dbfilename") ?? "dump.rdb",
  );
}

/** The value after `--name` in the container's entrypoint and command, if any. */
function commandArg(info: any, name: string): string | undefined {
  const args: string[] = [...(info?.Config?.Entrypoint ?? []), ...(info?.Config?.Cmd ?? [])];
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

/** The tar parts of one file of known size: its header, its body and the padding to a whole block. */
function fileEntry(
  name: string,
  size: number,
  o: { uid: number; gid: number; mode: number },
  body: ReadableStream<Uint8Array> | Uint8Array,
): Array<Uint8Array | ReadableStream<Uint8Array>> {
  return [fileHeader(name, size, o), body, new Uint8Array(padding(size))];
}

/** Holds back the last 40 bytes; at the end drops them when they are the hex EOF mark after the RDB's EOF opcode. */
export function dropEofMark(): TransformStream<Uint8Array, Uint8Array> {
  let held: Uint8Array = new Uint8Array(0);
  return new TransformStream({
    transform(chunk, c) {
      const all = new Uint8Array(held.length + chunk.length);
      all.set(held, 0);
      all.set(chunk, held.length);
      // keep 49 bytes: the mark and the 0xff opcode + 8-byte checksum before it
      const keep = Math.min(all.length, MARK + 9);
      if (all.length > keep) c.enqueue(all.slice(0, all.length - keep));
      held = all.slice(all.length - keep);
    },
    flush(c) {
      const n = held.length;
      if (n === 0) throw new StrategyError("redis-cli --rdb wrote nothing (it needs redis-cli 7.0 or later)");
      const mark = held.subarray(n - MARK);
      const isMark = n >= MARK + 9 && held[n - MARK - 9] === 0xff && mark.every((b) => /[0-9a-f]/.test(String.fromCharCode(b)));
      c.enqueue(isMark ? held.slice(0, n - MARK) : held);
    },
  });
}
