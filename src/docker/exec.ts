/**
 * Exec calls of the Engine API, streaming: a command run in a container with its stdout as a stream (demultiplexed),
 * stderr kept (capped) for error messages, stdin streamed in. The archive calls are in archive.ts.
 *
 * Why a raw socket for exec start: `POST /exec/{id}/start` with stdin attached hijacks the HTTP connection (the client
 * sends `Connection: Upgrade` / `Upgrade: tcp`, the engine answers `101 UPGRADED`, and from then on the socket is a raw
 * duplex: the engine writes 8-byte-framed stdout/stderr, the client writes stdin and half-closes its side (shutdown
 * write) to send EOF). fetch cannot do that, so the request is written by hand on a node:net socket opened with
 * `allowHalfOpen`, which keeps reading after we end our side.
 */
import { readFileSync } from "node:fs";
import type { Socket } from "node:net";
import { messageOf, openSocket } from "./raw-http";
import type { EngineTransport } from "./transport";
import { EngineError } from "./types";

/** What to run in a container. */
export interface ExecOptions {
  cmd: string[];
  /** Extra environment, `KEY=value` (secrets go here rather than in argv: argv shows in `ps`). */
  env?: string[];
  user?: string;
  workingDir?: string;
  /** Streamed to the command's stdin, then EOF; without it stdin is not attached. */
  stdin?: ReadableStream<Uint8Array>;
  /**
   * Aborting closes the connection and stops the command in the container (the engine has no "kill exec": see
   * `stopExec`); `result` then settles once it is gone (or the kill was tried).
   */
  signal?: AbortSignal;
  /** How long a stopped command gets between SIGTERM and SIGKILL, default 3 s. */
  killGraceMs?: number;
  /** Bytes of stderr kept (the last ones), default 64 KiB. */
  stderrCap?: number;
}

/** A running exec: read `stdout` to the end, then `result` says how it ended. */
export interface ExecProcess {
  stdout: ReadableStream<Uint8Array>;
  /** Settles after the output ended: the exit code and the (capped) stderr. */
  result: Promise<{ exitCode: number; stderr: string }>;
}

const STDERR_CAP = 64 * 1024;
const HEAD_CAP = 64 * 1024;
const KILL_GRACE_MS = 3000;
/** The environment variable marking every process of one exec (inherited by its children). */
export const EXEC_MARK = "SUNDECK_EXEC_MARK";

/** Create an exec in a running container and start it attached. */
export async function execIn(http: EngineTransport, id: string, o: ExecOptions): Promise<ExecProcess> {
  // only an exec that can be aborted is marked: the mark is how `stopExec` finds its processes
  const mark = o.signal ? crypto.randomUUID().replace(/-/g, "") : null;
  const env = [...(o.env ?? []), ...(mark ? [`${EXEC_MARK}=${mark}`] : [])];
  const created = await http.json("POST", `/containers/${encodeURIComponent(id)}/exec`, {
    body: {
      AttachStdin: Boolean(o.stdin),
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      Cmd: o.cmd,
      ...(env.length ? { Env: env } : {}),
      ...(o.user ? { User: o.user } : {}),
      ...(o.workingDir ? { WorkingDir: o.workingDir } : {}),
    },
    signal: o.signal,
  });
  const execId = String(created?.Id ?? "");
  const path = `/v${await http.apiVersion()}/exec/${execId}/start`;
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= stopExec(http, id, execId, { mark: mark!, user: o.user, graceMs: o.killGraceMs ?? KILL_GRACE_MS });
    return stopping;
  };
  let hijacked: { socket: Socket; rest: Buffer };
  try {
    hijacked = await hijack(http, path, { Detach: false, Tty: false }, o.signal);
  } catch (e) {
    // aborted while starting: the engine may have started it all the same
    if (o.signal?.aborted) await stop();
    throw e;
  }
  const { socket, rest } = hijacked;
  const cap = o.stderrCap ?? STDERR_CAP;
  let stderr: Uint8Array = new Uint8Array(0);
  let ended!: () => void;
  let failed!: (e: unknown) => void;
  const streamEnd = new Promise<void>((res, rej) => {
    ended = res;
    failed = rej;
  });
  streamEnd.catch(() => {});
  const frames = new FrameSplitter((kind, payload) => {
    if (kind === 2) stderr = keepTail(stderr, payload, cap);
    // a view of the socket's chunk, not a copy: node:net hands a fresh buffer per read
    else if (kind === 1) out.enqueue(payload);
  });
  let out!: ReadableStreamDefaultController<Uint8Array>;
  const stdout = new ReadableStream<Uint8Array>(
    {
      start(c) {
        out = c;
        if (rest.length) frames.push(new Uint8Array(rest));
        socket.on("data", (chunk: Buffer) => {
          frames.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((out.desiredSize ?? 1) <= 0) socket.pause();
        });
        socket.on("end", () => {
          try {
            out.close();
          } catch {}
          ended();
        });
        socket.on("error", (e: NodeJS.ErrnoException) => {
          // a command that exits before reading all its stdin closes the connection under our writes: that is its
          // end, and the exit code and stderr say what happened
          if (o.stdin && (e.code === "EPIPE" || e.code === "ECONNRESET") && !o.signal?.aborted) {
            try {
              out.close();
            } catch {}
            return ended();
          }
          try {
            out.error(e);
          } catch {}
          failed(e);
        });
        socket.on("close", () => ended());
      },
      pull() {
        socket.resume();
      },
      cancel() {
        socket.destroy();
        ended();
      },
    },
    { highWaterMark: 4 },
  );
  // a failing input stream aborts the exec (the command must not take a truncated input for a whole one)
  if (o.stdin) pumpStdin(o.stdin, socket).catch((e) => socket.destroy(e));
  const onAbort = () => {
    stop();
    socket.destroy(new DOMException("exec aborted", "AbortError"));
  };
  o.signal?.addEventListener("abort", onAbort, { once: true });
  if (o.signal?.aborted) onAbort();
  const result = streamEnd
    .finally(() => stopping)
    .then(async () => ({ exitCode: await exitCodeOf(http, execId), stderr: new TextDecoder().decode(stderr) }))
    .finally(() => o.signal?.removeEventListener("abort", onAbort));
  result.catch(() => {});
  return { stdout, result };
}

/**
 * Stop an exec's command in the container: the Engine API has no call for it, and the host PID it reports
 * (`GET /exec/{id}/json`) can only be signalled by a Sundeck that runs on the engine's host with the rights to (root,
 * or the same user), which a non-root Sundeck or a remote engine does not have. So a second exec, as the same user,
 * sends SIGTERM to every process of the container whose environment holds the exec's mark (the command and the
 * children it started, which inherit it), then SIGKILL to what is left after `graceMs`. It needs `sh`, `tr`, `grep`
 * and `kill` in the image; without them (distroless) the host PID is signalled, when this host shows that PID with
 * the mark (same PID namespace as the engine, and the rights to read and signal it: root, or the same user). Never
 * throws.
 */
export async function stopExec(
  http: EngineTransport,
  containerId: string,
  execId: string,
  o: { mark: string; user?: string; graceMs: number },
): Promise<void> {
  const sweep = async (sig: "TERM" | "KILL"): Promise<number> => {
    // the script finds the marked processes by /proc/<pid>/environ (readable for the same user) and signals them; it
    // prints how many it found, the mark is in its argv, not its environment, so it never matches itself
    const script =
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell script
      'n=0; for d in /proc/[0-9]*; do if tr "\\0" "\\n" <"$d/environ" 2>/dev/null | grep -qxF "$1"; then kill -"$2" "${d#/proc/}" 2>/dev/null; n=$((n+1)); fi; done; echo "$n"';
    try {
      const p = await execIn(http, containerId, {
        cmd: ["sh", "-c", script, "sundeck-stop", `${EXEC_MARK}=${o.mark}`, sig],
        ...(o.user ? { user: o.user } : {}),
        stderrCap: 4096,
      });
      const out = await new Response(p.stdout).text();
      const { exitCode } = await p.result;
      return exitCode === 0 ? Number(out.trim()) || 0 : -1;
    } catch {
      return -1;
    }
  };
  const running = async (): Promise<{ running: boolean; pid: number }> => {
    try {
      const info = await http.json("GET", `/exec/${execId}/json`);
      return { running: Boolean(info?.Running), pid: Number(info?.Pid) || 0 };
    } catch {
      return { running: false, pid: 0 };
    }
  };
  // only a process this host shows with the exec's mark: the engine's PID may be of another PID namespace (an engine
  // in a VM or in a container) or reused by now, and a wrong PID must never be signalled
  const hostKill = (pid: number, sig: "SIGTERM" | "SIGKILL") => {
    if (!(pid > 1) || !http.target.socketPath) return;
    try {
      if (!readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(`${EXEC_MARK}=${o.mark}`)) return;
      process.kill(pid, sig);
    } catch {}
  };
  const found = await sweep("TERM");
  if (found < 0) hostKill((await running()).pid, "SIGTERM");
  if (found === 0) return;
  const deadline = Date.now() + o.graceMs;
  for (let wait = 20; Date.now() < deadline; wait = Math.min(wait * 2, 250)) {
    if (!(await running()).running) break;
    await Bun.sleep(wait);
  }
  // what is left (the command ignoring TERM, or children it left behind) is killed
  const still = await running();
  if (found < 0) {
    if (still.running) hostKill(still.pid, "SIGKILL");
    return;
  }
  await sweep("KILL");
}

/** Open a connection, send the upgrade request, and return the socket once the engine answered 101 (or 200). */
async function hijack(
  http: EngineTransport,
  path: string,
  body: unknown,
  signal?: AbortSignal,
): Promise<{ socket: Socket; rest: Buffer }> {
  const socket = openSocket(http);
  const json = JSON.stringify(body);
  const request =
    `POST ${path} HTTP/1.1\r\nHost: docker\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n` +
    `Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n${json}`;
  return await new Promise((resolve, reject) => {
    let head = Buffer.alloc(0);
    const fail = (e: unknown) => {
      cleanup();
      socket.destroy();
      reject(e);
    };
    const onAbort = () => fail(new DOMException("exec aborted", "AbortError"));
    const onError = (e: unknown) => fail(http.connectionError(e, signal));
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) {
        if (head.length > HEAD_CAP) fail(new EngineError(502, "engine sent an oversized response head"));
        return;
      }
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head.subarray(0, end).toString("latin1"))?.[1] ?? 0);
      const rest = head.subarray(end + 4);
      if (status === 101 || status === 200) {
        cleanup();
        socket.pause();
        // what came with the head belongs to the stream: the caller feeds it first
        resolve({ socket, rest });
        return;
      }
      // an error answer: read its (small) body, by Content-Length or until the engine closes, then report it
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head.subarray(0, end).toString("latin1"))?.[1] ?? -1);
      let errBody = rest;
      const report = () => fail(new EngineError(status, messageOf(errBody.toString()) || `exec start answered ${status}`));
      socket.removeListener("data", onData);
      if (length >= 0 && errBody.length >= length) return report();
      socket.on("data", (c: Buffer) => {
        errBody = Buffer.concat([errBody, c]).subarray(0, HEAD_CAP);
        if (length >= 0 && errBody.length >= length) report();
      });
      socket.once("end", report);
    };
    function cleanup() {
      socket.removeListener("data", onData);
      socket.removeListener("error", onError);
      signal?.removeEventListener("abort", onAbort);
    }
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    socket.on("data", onData);
    socket.on("error", onError);
    socket.write(request);
  });
}

/** Write the stdin stream to the socket with backpressure, then half-close (EOF for the command). */
async function pumpStdin(stdin: ReadableStream<Uint8Array>, socket: Socket): Promise<void> {
  const reader = stdin.getReader();
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      if (socket.destroyed || socket.writableEnded) {
        reader.cancel().catch(() => {});
        return;
      }
      if (!socket.write(r.value)) {
        await new Promise<void>((res) => {
          const go = () => {
            socket.off("drain", go);
            socket.off("close", go);
            res();
          };
          socket.on("drain", go);
          socket.on("close", go);
        });
      }
    }
    if (!socket.destroyed) socket.end();
  } catch (e) {
    reader.cancel(e).catch(() => {});
    throw e;
  }
}

/**
 * The exit code once the engine marks the exec finished. The output can end a moment before the engine records the
 * exit, so it is asked again briefly (a bounded wait, 5 s).
 */
async function exitCodeOf(http: EngineTransport, execId: string): Promise<number> {
  const deadline = Date.now() + 5000;
  for (let wait = 5; ; wait = Math.min(wait * 2, 200)) {
    const info = await http.json("GET", `/exec/${execId}/json`);
    if (!info?.Running && info?.ExitCode !== null && info?.ExitCode !== undefined) return Number(info.ExitCode);
    if (Date.now() > deadline) throw new EngineError(500, `exec ${execId.slice(0, 12)} did not report an exit code`);
    await Bun.sleep(wait);
  }
}

/** Splits the multiplexed stream (`[kind, 0, 0, 0, size u32 BE] payload`) into payloads as they arrive. */
export class FrameSplitter {
  private header = new Uint8Array(8);
  private have = 0;
  private left = 0;
  private kind = 0;

  constructor(private readonly onPayload: (kind: number, payload: Uint8Array) => void) {}

  push(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.left === 0) {
        const n = Math.min(8 - this.have, chunk.length - at);
        this.header.set(chunk.subarray(at, at + n), this.have);
        this.have += n;
        at += n;
        if (this.have < 8) return;
        this.have = 0;
        const h = this.header;
        this.kind = h[0];
        this.left = ((h[4] << 24) >>> 0) + (h[5] << 16) + (h[6] << 8) + h[7];
        continue;
      }
      const n = Math.min(this.left, chunk.length - at);
      this.onPayload(this.kind, chunk.subarray(at, at + n));
      this.left -= n;
      at += n;
    }
  }
}

function keepTail(kept: Uint8Array, more: Uint8Array, cap: number): Uint8Array {
  const all = new Uint8Array(kept.length + more.length);
  all.set(kept, 0);
  all.set(more, kept.length);
  return all.length > cap ? all.slice(all.length - cap) : all;
}
