/**
 * The container logs stream, /api/apps/{slug}/logs: the lines of one service (every replica), history first (merged
 * by time), then live until the containers stop; a replica that starts while the stream follows (a rolling deploy's
 * new one, a scale up) joins it from its first line. Every stream reads the shared feeds of the log hub: history comes
 * from their rings when they hold it, from one engine call when they do not, and live lines from the one follow.
 */
import { Elysia, t } from "elysia";
import type { Ctx } from "../../context";
import { projectName } from "../../docker/naming";
import type { ContainerSummary, Engine } from "../../docker/types";
import { streamHandlers } from "../../http/stream";
import { CLOSE, type StreamSocket } from "../../http/ws";
import { parseDuration } from "../../lib/duration";
import { authPlugin } from "../auth/macro";
import { defaultService } from "./default-service";
import type { ContainerFeed, FeedEnd, FeedViewer } from "./feed";
import { fromRing, type HubLine, hubLine, unixKey } from "./ring";

/** Live lines a stream may hold back while its history is still being read; past it the stream is closed. */
const MAX_PENDING = 10_000;
/** The same in bytes of frames (lines may be up to 32 KiB each). */
const MAX_PENDING_BYTES = 4 * 1024 * 1024;
/** Most history lines one stream may ask for (the CLI asks for this many when it reconnects with `since`). */
const MAX_TAIL = 10_000;
/**
 * Most history one stream holds and sends, in bytes of frames: the newest lines within it are sent. Ten thousand
 * lines of up to 32 KiB would otherwise be hundreds of MiB per stream, read before anything is sent.
 */
export const MAX_HISTORY_BYTES = 8 * 1024 * 1024;
/** History is sent while the client has less than this unsent, then waits for it to catch up. */
const HISTORY_PACE = 256 * 1024;

/**
 * Streams reading their history from the engine and sending it, at once: each holds up to MAX_HISTORY_BYTES (twice
 * that while reading) for as long as its client takes to read it (up to the stall limit), so together they are few.
 */
export const MAX_ENGINE_HISTORIES = 4;

/** A counting semaphore; a waiter whose signal aborts leaves the queue. */
class Slots {
  private used = 0;
  private readonly queue = new Set<() => void>();

  constructor(private readonly max: number) {}

  /** Resolves true once a slot is taken, false if `signal` aborted first. */
  take(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    if (this.used < this.max) {
      this.used++;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const go = () => {
        signal.removeEventListener("abort", gone);
        this.used++;
        resolve(true);
      };
      const gone = () => {
        this.queue.delete(go);
        resolve(false);
      };
      this.queue.add(go);
      signal.addEventListener("abort", gone, { once: true });
    });
  }

  release(): void {
    this.used--;
    const next = this.queue.values().next();
    if (next.done) return;
    this.queue.delete(next.value);
    next.value();
  }
}

/** The newest of `lines` (oldest first) whose frames fit in `bytes`. */
function newestWithin(lines: HubLine[], bytes: number): HubLine[] {
  let i = lines.length;
  for (let n = 0; i > 0 && n + lines[i - 1].json.length <= bytes; i--) n += lines[i - 1].json.length;
  return i === 0 ? lines : lines.slice(i);
}

/** Farthest a time may be from 1970 (ECMAScript's date range, in ms). */
const MAX_TIME_MS = 8.64e15;

/**
 * `since` as unix seconds: an RFC 3339 time or a duration back from now; null when empty; NaN when malformed or out
 * of the range of dates (a duration of a million years is not an error of the server's).
 */
export function parseSince(text: string | undefined, now: number): number | null {
  if (!text) return null;
  const d = parseDuration(text);
  if (d !== null) return Math.abs(now - d) <= MAX_TIME_MS ? (now - d) / 1000 : Number.NaN;
  if (/^\d{4}-\d\d-\d\dT/.test(text)) {
    const t = Date.parse(text);
    if (!Number.isNaN(t)) return t / 1000;
  }
  return Number.NaN;
}

/** One stream's view of one feed: live lines wait in `pending` until the history has been sent. */
export class Viewer implements FeedViewer {
  pending: HubLine[] | null = [];
  private pendingBytes = 0;
  ended: FeedEnd | null = null;

  constructor(
    private readonly sock: StreamSocket,
    private readonly onEnd: () => void,
  ) {}

  line(l: HubLine): void {
    if (this.pending === null) {
      this.sock.sendText(l.json);
      return;
    }
    this.pending.push(l);
    this.pendingBytes += l.json.length;
    if (this.pending.length > MAX_PENDING || this.pendingBytes > MAX_PENDING_BYTES) {
      this.pending = [];
      this.pendingBytes = 0;
      this.sock.close(CLOSE.serverError, "too many log lines while reading history");
    }
  }

  end(e: FeedEnd): void {
    this.ended = e;
    if (this.pending === null) this.onEnd();
  }

  /** Send what waited, then go live. */
  flush(): void {
    const waiting = this.pending ?? [];
    this.pending = null;
    for (const l of waiting) this.sock.sendText(l.json);
    if (this.ended) this.onEnd();
  }
}

/** History of one feed: from its ring when that holds it, else one engine call joined to the ring seamlessly. */
async function history(
  engine: Engine,
  feed: ContainerFeed,
  ring: HubLine[],
  q: { tail: number; sinceKey: string; since: number | null; signal: AbortSignal },
): Promise<HubLine[]> {
  const cached = fromRing(ring, feed.complete, q.tail, q.sinceKey);
  if (cached) return cached;
  const oldest = ring[0]?.key ?? "";
  let older: HubLine[] = [];
  let bytes = 0;
  for await (const l of engine.logs(feed.id, { tail: q.tail, since: q.since ?? undefined, follow: false, signal: q.signal })) {
    if (l.partial) continue;
    const h = hubLine(l);
    // the ring takes over from its oldest line on: what the engine sent after that is already there
    if (oldest && (h.key === "" || h.key >= oldest)) continue;
    older.push(h);
    bytes += h.json.length;
    // only the newest lines within the budget are sent: let go of the oldest as the read goes on
    if (bytes > 2 * MAX_HISTORY_BYTES) {
      older = newestWithin(older, MAX_HISTORY_BYTES);
      bytes = older.reduce((n, x) => n + x.json.length, 0);
    }
  }
  const all = [...older, ...(q.sinceKey ? ring.filter((l) => l.key >= q.sinceKey) : ring)];
  return newestWithin(all.slice(-q.tail), MAX_HISTORY_BYTES);
}

/** The containers of a service: the status board's (no engine call), else the engine's when the board has none yet. */
async function containersOf(ctx: Ctx, engine: Engine, slug: string, service: string): Promise<ContainerSummary[]> {
  const known = ctx.status.containers(slug).filter((c) => c.service === service);
  if (known.length) return known;
  return (await engine.containers({ project: projectName(slug) })).filter((c) => c.service === service);
}

/**
 * The service a stream shows: the one asked for, else the app's default (services of the version it runs, else of
 * its containers); an error line naming the services when the app has no default.
 */
function serviceOf(ctx: Ctx, slug: string, asked: string | undefined): { service: string } | { error: string } {
  if (asked) return { service: asked };
  const app = ctx.appRepo.bySlug(slug);
  const view = app ? ctx.appViews.view(app) : null;
  let services = view?.services.map((s) => s.name) ?? [];
  if (!services.length) services = [...new Set(ctx.status.containers(slug).flatMap((c) => (c.service ? [c.service] : [])))];
  const service = defaultService(services, view?.endpoints.map((e) => e.service) ?? []);
  if (service) return { service };
  return {
    error: `not found: no default service for ${slug} (no web, several services, none routed); choose one of: ${services.join(", ")}`,
  };
}

/** /api/apps/:slug/logs */
export function logRoutes(ctx: Ctx) {
  const hub = ctx.logHub;
  const engineHistories = new Slots(MAX_ENGINE_HISTORIES);
  return new Elysia({ name: "log-routes", prefix: "/api/apps" }).use(authPlugin(ctx)).ws("/:slug/logs", {
    auth: { app: "read" },
    query: t.Object({
      service: t.Optional(t.String()),
      tail: t.Optional(t.String()),
      follow: t.Optional(t.String()),
      since: t.Optional(t.String()),
    }),
    ...streamHandlers<{ service?: string; tail?: string; follow?: string; since?: string }, { slug: string }>(
      ctx,
      "logs",
      async (sock, c) => {
        const engine = ctx.docker.engine;
        const tail = c.query.tail === undefined || c.query.tail === "" ? 100 : Number(c.query.tail);
        const follow = c.query.follow !== "false";
        const since = parseSince(c.query.since, ctx.clock.now());
        if (!Number.isInteger(tail) || tail < 0 || tail > MAX_TAIL || Number.isNaN(since)) {
          sock.send({
            error: `bad query: tail must be a whole number from 0 to ${MAX_TAIL}, since an RFC 3339 time or a duration such as 10m`,
          });
          return sock.close(CLOSE.normal);
        }
        if (!engine) {
          sock.send({ error: "docker is not available" });
          return sock.close(CLOSE.normal);
        }
        const chosen = serviceOf(ctx, c.params.slug, c.query.service);
        if ("error" in chosen) {
          sock.send(chosen);
          return sock.close(CLOSE.normal);
        }
        const service = chosen.service;
        const containers = await containersOf(ctx, engine, c.params.slug, service);
        if (containers.length === 0) {
          sock.send({ error: `not found: no container for service ${service} of ${c.params.slug}` });
          return sock.close(CLOSE.normal);
        }
        const ac = new AbortController();
        // a feed that lingered may stop while another loads its history: take the hub's current feeds again then
        let feeds: ContainerFeed[];
        do {
          feeds = containers.map((x) => hub.feed(x.id));
          await Promise.all(feeds.map((f) => f.ready));
          if (!sock.open) return;
        } while (!feeds.every((f) => hub.current(f) || f.end));

        // in one step: each ring as it is now, and every line after it to the viewer (nothing missed, nothing twice);
        // the copies of the rings are used for the history only, not kept for the life of the stream (a thousand
        // streams would hold a thousand copies of up to 1,000 lines each)
        const rings = feeds.map((f) => f.ring.lines());
        const viewers = feeds.map((f) => {
          const viewer = new Viewer(sock, () => finished());
          const stop = hub.watch(f, viewer);
          return { f, viewer, stop };
        });
        const unwatch = () => {
          ac.abort();
          for (const v of viewers) v.stop();
        };
        sock.onClose(unwatch);
        const finished = () => {
          const ends = viewers.map((v) => v.viewer.ended);
          const error = ends.find((e) => e?.kind === "error");
          if (error?.kind === "error") sock.close(CLOSE.serverError, error.message.slice(0, 120));
          else if (ends.every((e) => e?.kind === "stopped")) sock.close(CLOSE.normal, "containers stopped");
        };

        const sinceKey = since === null ? "" : unixKey(since);
        // a history the rings cannot serve is read from the engine and held until sent: a few at a time
        const fromEngine = viewers.some((v, i) => !fromRing(rings[i], v.f.complete, tail, sinceKey));
        if (fromEngine && !(await engineHistories.take(ac.signal))) return;
        try {
          const parts = await Promise.all(
            viewers.map((v, i) => history(engine, v.f, rings[i], { tail, sinceKey, since, signal: ac.signal })),
          );
          rings.length = 0;
          // replicas merged by time; lines without a timestamp keep their place within their replica
          const merged = parts.flat().sort((a, b) => (a.key && b.key ? (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) : 0));
          for (const l of newestWithin(merged.slice(Math.max(0, merged.length - tail)), MAX_HISTORY_BYTES)) {
            if (!sock.sendText(l.json)) return;
            await sock.drained(HISTORY_PACE);
          }
        } finally {
          if (fromEngine) engineHistories.release();
        }
        if (!follow) return sock.close(CLOSE.normal, "end of history");
        for (const v of viewers) v.viewer.flush();

        // replicas that start from now on join the stream with the lines they have written so far, then live
        const seen = new Set(containers.map((x) => x.id));
        const join = async (id: string) => {
          const f = hub.feed(id);
          await f.ready;
          if (!sock.open) return;
          // in one step, as above: what the ring holds now, and every line after it
          const ring = f.ring.lines();
          const viewer = new Viewer(sock, () => finished());
          viewers.push({ f, viewer, stop: hub.watch(f, viewer) });
          for (const l of ring) sock.sendText(l.json);
          viewer.flush();
        };
        const joinNew = () => {
          for (const x of ctx.status.containers(c.params.slug)) {
            if (x.service !== service || x.state !== "running" || seen.has(x.id)) continue;
            seen.add(x.id);
            void join(x.id);
          }
        };
        sock.onClose(ctx.status.onChange(joinNew));
        joinNew();
      },
    ),
  } as any);
}
