/**
 * Following work on the server. Deploys: open `deploy-logs` first, then start the work, print frames until the done
 * frame, and learn the outcome from the deploy's record (polling when the stream missed it). Container logs: the
 * `logs` stream, reconnecting with backoff after an unexpected disconnect while following.
 */
import type { ContainerLogFrame } from "../shared/apps";
import type { Accepted, DeployFrame, DeployRecord } from "../shared/deploys";
import type { Api } from "./api";
import { ClientError } from "./errors";

/** Raised inside waits when the signal fires; callers turn it into their own message. */
export class Aborted extends Error {}

/** Resolve after `ms`, or reject with Aborted when `signal` fires first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Aborted("aborted"));
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(t);
      reject(new Aborted("aborted"));
    };
    signal?.addEventListener("abort", stop, { once: true });
  });
}

/** JSON frames of one socket, buffered from the moment it is wrapped (right after it opened) until read. */
export class Frames<F> {
  private readonly queue: F[] = [];
  private code: number | null = null;
  /** The close reason, once closed. */
  reason = "";
  private wake: (() => void) | null = null;

  constructor(readonly ws: WebSocket) {
    ws.addEventListener("message", (e: MessageEvent) => {
      try {
        this.queue.push(JSON.parse(typeof e.data === "string" ? e.data : new TextDecoder().decode(e.data as ArrayBuffer)));
      } catch {
        return; // not a frame of ours
      }
      this.wake?.();
    });
    ws.addEventListener("close", (e: CloseEvent) => {
      this.code = e.code;
      this.reason = e.reason;
      this.wake?.();
    });
  }

  /**
   * Hand frames to `onFrame` until the socket closes (resolves with its close code) or `onFrame` returns true (the
   * reader has what it came for: the socket is closed, 1000). Rejects with Aborted when `signal` fires.
   */
  async read(onFrame: (f: F) => unknown, signal?: AbortSignal): Promise<number> {
    for (;;) {
      while (this.queue.length) {
        if (onFrame(this.queue.shift()!) === true) {
          this.ws.close(1000);
          return 1000;
        }
      }
      if (this.code !== null) return this.code;
      await new Promise<void>((resolve, reject) => {
        const abort = () => {
          this.wake = null;
          this.ws.close(1000);
          reject(new Aborted("aborted"));
        };
        if (signal?.aborted) return abort();
        signal?.addEventListener("abort", abort, { once: true });
        this.wake = () => {
          this.wake = null;
          signal?.removeEventListener("abort", abort);
          resolve();
        };
      });
    }
  }
}

/** Open a stream and start buffering its frames at once. */
async function openFrames<F>(api: Api, path: string, query?: Record<string, string | undefined>): Promise<Frames<F>> {
  return new Frames<F>(await api.openSocket(path, query));
}

const isFinal = (d: DeployRecord | null) => d === null || d.status !== "running";

/**
 * Run `start` with the app's deploy stream already open, print its frames through `onFrame`, and resolve with the
 * deploy's final record (null when the deploy's app is gone, as after a successful remove).
 */
export async function runAndFollow(
  api: Api,
  slug: string,
  start: () => Promise<Accepted>,
  onFrame: (f: DeployFrame) => void,
  signal?: AbortSignal,
): Promise<{ deployId: number | null; deploy: DeployRecord | null }> {
  const path = `/apps/${encodeURIComponent(slug)}/deploy-logs`;
  const open = () => openFrames<DeployFrame>(api, path).catch(() => null);
  let ws = await open();
  if (signal?.aborted) {
    ws?.ws.close(1000);
    throw new Aborted("aborted");
  }
  let accepted: Accepted;
  try {
    accepted = await start();
  } catch (e) {
    ws?.ws.close(1000);
    throw e;
  }
  const id = accepted.deploy_id;
  const fetchDeploy = () =>
    id === null ? Promise.resolve(null) : api.maybe<DeployRecord>("GET", `/apps/${encodeURIComponent(slug)}/deploys/${id}`);
  const seen = new Set<string>();
  let last = "";
  for (;;) {
    if (ws) {
      await ws.read((f) => {
        // the idle answer of a stream that saw no deploy start
        if (f.action === "none" && f.done && !f.output) return true;
        const key = `${f.timestamp}\u0000${f.action}\u0000${f.output}`;
        // the done frame often repeats the last line as its summary
        if (!seen.has(key) && !(f.done && f.output === last)) onFrame(f);
        seen.add(key);
        last = f.output;
        return f.done;
      }, signal);
    } else await sleep(1000, signal);
    const deploy = await fetchDeploy();
    if (isFinal(deploy)) return { deployId: id, deploy };
    // still running: the stream showed another run, missed it, or dropped; follow again (it replays what we missed)
    ws = await open();
  }
}

/** Follow whatever runs for the app now, until it finishes; null when nothing runs. */
export async function followCurrent(
  api: Api,
  slug: string,
  onFrame: (f: DeployFrame) => void,
  signal?: AbortSignal,
): Promise<DeployRecord | null> {
  const recent = await api.get<DeployRecord[]>(`/apps/${encodeURIComponent(slug)}/deploys`);
  const running = recent.find((d) => d.status === "running");
  if (!running) return null;
  const r = await runAndFollow(api, slug, async () => ({ slug, deploy_id: running.id }), onFrame, signal);
  // a record that vanished belonged to a removal that succeeded (the app and its journal are gone)
  return r.deploy ?? { ...running, status: "succeeded", finished_at: new Date().toISOString() };
}

/**
 * Stream container logs to `onLine` (the server picks the service when `q.service` is not given); an error frame, or
 * a close other than a clean one when not following, becomes a ClientError.
 */
export async function streamLogs(
  api: Api,
  slug: string,
  q: { service?: string; tail: number; since?: string; follow: boolean },
  onLine: (f: ContainerLogFrame) => void,
  signal?: AbortSignal,
): Promise<void> {
  let lastTs = "";
  let atLastTs = new Set<string>();
  let delay = 1000;
  let first = true;
  for (;;) {
    const query = {
      service: q.service,
      tail: first ? String(q.tail) : "10000",
      follow: String(q.follow),
      // the server reads times to the millisecond
      since: first ? q.since : lastTs.replace(/(\.\d{3})\d+/, "$1") || q.since,
    };
    let ws: Frames<ContainerLogFrame>;
    try {
      ws = await openFrames<ContainerLogFrame>(api, `/apps/${encodeURIComponent(slug)}/logs`, query);
    } catch (e) {
      if (first) throw e;
      await sleep(delay, signal);
      delay = Math.min(delay * 2, 30_000);
      continue;
    }
    let error: string | null = null;
    const code = await ws.read((f) => {
      if (f.error) {
        error = f.error;
        return true;
      }
      const ts = f.ts ?? "";
      // after a reconnect `since` repeats the last second: drop lines already printed
      if (ts && lastTs && (ts < lastTs || (ts === lastTs && atLastTs.has(f.line ?? "")))) return;
      if (ts && ts !== lastTs) {
        lastTs = ts;
        atLastTs = new Set();
      }
      if (ts) atLastTs.add(f.line ?? "");
      delay = 1000;
      onLine(f);
    }, signal);
    if (error) throw new ClientError(error);
    // a clean close ends the stream (history sent, containers stopped); only a broken one is retried
    if (code === 1000) return;
    if (code === 1008) throw new ClientError("the server refused the stream (policy violation)");
    if (!q.follow) throw new ClientError(`the logs stream closed with ${code}${ws.reason ? `: ${ws.reason}` : ""}`);
    first = false;
    await sleep(delay, signal);
    delay = Math.min(delay * 2, 30_000);
  }
}
