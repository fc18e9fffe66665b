/**
 * The container logs stream, /api/apps/{slug}/logs: the lines of one service (every replica), history first (merged
 * by time), then live until the containers stop. Every stream reads the shared feeds of the log hub: history comes
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
import type { ContainerFeed, FeedEnd, FeedViewer } from "./feed";
import { fromRing, type HubLine, hubLine, unixKey } from "./ring";

/** Live lines a stream may hold back while its history is still being read; past it the stream is closed. */
const MAX_PENDING = 10_000;
/** Most history lines one stream may ask for (the CLI asks for this many when it reconnects with `since`). */
const MAX_TAIL = 10_000;

/** `since` as unix seconds: an RFC 3339 time or a duration back from now; null when empty; NaN when malformed. */
export function parseSince(text: string | undefined, now: number): number | null {
  if (!text) return null;
  const d = parseDuration(text);
  if (d !== null) return (now - d) / 1000;
  if (/^\d{4}-\d\d-\d\dT/.test(text)) {
    const t = Date.parse(text);
    if (!Number.isNaN(t)) return t / 1000;
  }
  return Number.NaN;
}

/** One stream's view of one feed: live lines wait in `pending` until the history has been sent. */
class Viewer implements FeedViewer {
  pending: HubLine[] | null = [];
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
    if (this.pending.length > MAX_PENDING) this.sock.close(CLOSE.serverError, "too many log lines while reading history");
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
  const older: HubLine[] = [];
  for await (const l of engine.logs(feed.id, { tail: q.tail, since: q.since ?? undefined, follow: false, signal: q.signal })) {
    const h = hubLine(l);
    // the ring takes over from its oldest line on: what the engine sent after that is already there
    if (!oldest || (h.key !== "" && h.key < oldest)) older.push(h);
  }
  const all = [...older, ...(q.sinceKey ? ring.filter((l) => l.key >= q.sinceKey) : ring)];
  return all.slice(-q.tail);
}

/** The containers of a service: the status board's (no engine call), else the engine's when the board has none yet. */
async function containersOf(ctx: Ctx, engine: Engine, slug: string, service: string): Promise<ContainerSummary[]> {
  const known = ctx.status.containers(slug).filter((c) => c.service === service);
  if (known.length) return known;
  return (await engine.containers({ project: projectName(slug) })).filter((c) => c.service === service);
}

/** /api/apps/:slug/logs */
export function logRoutes(ctx: Ctx) {
  const hub = ctx.logHub;
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
        const service = c.query.service || "web";
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
        const parts = await Promise.all(
          viewers.map((v, i) => history(engine, v.f, rings[i], { tail, sinceKey, since, signal: ac.signal })),
        );
        rings.length = 0;
        // replicas merged by time; lines without a timestamp keep their place within their replica
        const merged = parts.flat().sort((a, b) => (a.key && b.key ? (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) : 0));
        for (const l of merged.slice(Math.max(0, merged.length - tail))) sock.sendText(l.json);
        if (!follow) return sock.close(CLOSE.normal, "end of history");
        for (const v of viewers) v.viewer.flush();
      },
    ),
  } as any);
}
