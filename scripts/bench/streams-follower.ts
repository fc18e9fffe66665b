/**
 * One follower of a container log stream, as the benchmark sees it: a WebSocket on /api/apps/{slug}/logs that checks
 * every `line-N` frame against the one before it (consecutive, nothing twice), and notes error frames, closes it did
 * not ask for, and how late a sample of lines arrived against the engine's timestamp.
 */

const LINE = '"line":"line-';
const TS = '"ts":"';

export class Follower {
  /** First and last line number received (-1 before the first). */
  first = -1;
  last = -1;
  /** Lines received in order. */
  delivered = 0;
  /** Lines skipped over (a jump from N to N+k counts k-1). */
  skipped = 0;
  /** Lines at or below one already received. */
  duplicated = 0;
  /** Lines received while `counting` is on (the measuring window). */
  inWindow = 0;
  counting = false;
  /** Frames that are neither a numbered line nor an error (should be none). */
  other = 0;
  /** Why the stream failed: an error frame, a close the bench did not ask for, a socket error. */
  failures: string[] = [];
  /** ms from the engine's timestamp to arrival, for every 25th line of the window. */
  lags: number[] = [];
  /** performance.now of the upgrade's answer and of the first frame. */
  openedAt = 0;
  firstFrameAt = 0;
  private closing = false;
  private ws: WebSocket | null = null;
  private closedResolve: () => void = () => {};
  readonly closed = new Promise<void>((r) => {
    this.closedResolve = r;
  });
  private firstFrame: () => void = () => {};
  /** Resolves at the first frame, or when the stream failed before one. */
  readonly started = new Promise<void>((r) => {
    this.firstFrame = r;
  });

  constructor(
    readonly container: number,
    private readonly url: string,
    private readonly headers: Record<string, string>,
  ) {}

  open(): void {
    const ws = new WebSocket(this.url, { headers: this.headers } as any);
    this.ws = ws;
    ws.addEventListener("open", () => {
      this.openedAt = performance.now();
    });
    ws.addEventListener("message", (e) => this.frame(typeof e.data === "string" ? e.data : String(e.data)));
    ws.addEventListener("error", () => {
      if (!this.closing) this.failures.push("socket error");
    });
    ws.addEventListener("close", (e) => {
      if (!this.closing) this.failures.push(`closed by the server: ${e.code} ${e.reason}`);
      this.firstFrame();
      this.closedResolve();
    });
  }

  private frame(data: string): void {
    if (this.firstFrameAt === 0) {
      this.firstFrameAt = performance.now();
      this.firstFrame();
    }
    const i = data.indexOf(LINE);
    if (i < 0) {
      if (data.includes('"error"')) this.failures.push(`error frame: ${data.slice(0, 200)}`);
      else this.other++;
      return;
    }
    const n = Number.parseInt(data.slice(i + LINE.length, i + LINE.length + 12), 10);
    if (this.last < 0) this.first = n;
    else if (n <= this.last) {
      this.duplicated++;
      return;
    } else if (n > this.last + 1) this.skipped += n - this.last - 1;
    this.last = n;
    this.delivered++;
    if (!this.counting) return;
    this.inWindow++;
    // history lines are old by design: lag is sampled in the window only
    if (n % 25 === 0) {
      const t = data.indexOf(TS);
      if (t >= 0) {
        // Docker's RFC 3339 with nanoseconds: keep the milliseconds
        const ts = Date.parse(`${data.slice(t + TS.length, t + TS.length + 23)}Z`);
        if (!Number.isNaN(ts)) this.lags.push(Date.now() - ts);
      }
    }
  }

  /** Close from the client side (not a failure); resolves when the close completed. */
  close(): Promise<void> {
    this.closing = true;
    try {
      this.ws?.close(1000, "bench done");
    } catch {
      this.closedResolve();
    }
    return this.closed;
  }

  get ok(): boolean {
    return this.failures.length === 0;
  }
}

/**
 * The reference: the bench's own follow of a container straight on the Engine API (`/containers/<id>/logs`,
 * timestamps on, multiplexed stdout/stderr), with the same lag sampling as a follower. When it lags too, the delay
 * was Docker's or the machine's, not the server's.
 */
export class EngineFollower {
  lags: number[] = [];
  counting = false;
  last = -1;
  skipped = 0;
  private readonly ac = new AbortController();

  constructor(private readonly id: string) {}

  async start(): Promise<void> {
    const host = process.env.DOCKER_HOST ?? "unix:///var/run/docker.sock";
    if (!host.startsWith("unix://")) throw new Error(`the engine reference follow needs a unix socket, not ${host}`);
    const since = Math.floor(Date.now() / 1000);
    const res = await fetch(
      `http://localhost/containers/${this.id}/logs?follow=1&stdout=1&stderr=1&timestamps=1&since=${since}`,
      { unix: host.slice("unix://".length), signal: this.ac.signal } as RequestInit,
    );
    if (!res.ok || !res.body) throw new Error(`engine logs of ${this.id}: ${res.status}`);
    void this.read(res.body).catch(() => {});
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    let buf = new Uint8Array(0);
    const dec = new TextDecoder();
    for await (const chunk of body) {
      const joined = new Uint8Array(buf.length + chunk.length);
      joined.set(buf);
      joined.set(chunk, buf.length);
      buf = joined;
      let at = 0;
      // frames: 1 byte stream, 3 zero bytes, 4 bytes big-endian length, then the payload
      while (buf.length - at >= 8) {
        const size = new DataView(buf.buffer, buf.byteOffset + at + 4, 4).getUint32(0);
        if (buf.length - at < 8 + size) break;
        for (const text of dec.decode(buf.subarray(at + 8, at + 8 + size)).split("\n")) if (text) this.line(text);
        at += 8 + size;
      }
      buf = buf.slice(at);
    }
  }

  private line(text: string): void {
    const i = text.indexOf(" line-");
    if (i < 0) return;
    const n = Number.parseInt(text.slice(i + 6), 10);
    if (this.last >= 0 && n > this.last + 1) this.skipped += n - this.last - 1;
    this.last = Math.max(this.last, n);
    if (this.counting && n % 25 === 0) {
      const ts = Date.parse(`${text.slice(0, 23)}Z`);
      if (!Number.isNaN(ts)) this.lags.push(Date.now() - ts);
    }
  }

  stop(): void {
    this.ac.abort();
  }
}

/** The longest the bench's own event loop was late on a 10 ms timer while `run` is on: a stalled client shows here. */
export class StallMeter {
  max = 0;
  private timer: ReturnType<typeof setInterval> | null = null;

  start(): void {
    let prev = performance.now();
    this.max = 0;
    this.timer = setInterval(() => {
      const now = performance.now();
      this.max = Math.max(this.max, now - prev - 10);
      prev = now;
    }, 10);
  }

  stop(): number {
    if (this.timer) clearInterval(this.timer);
    return this.max;
  }
}
