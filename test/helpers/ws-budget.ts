/**
 * Resident memory of the stream plumbing under clients that never read, measured in a child process (in the test
 * runner's own process the other tests' heaps decide when the collector runs). The child serves WebSockets with the
 * app's settings through a real WsHub and pushes 32 KiB frames to every open stream as fast as the hub lets it (a
 * chatty container's feed), or in mode `history` sends each about 4.4 MiB (more than the kernel takes) and closes it normally (a `follow=false`
 * stream); the parent opens `sockets` raw clients per round that stop reading once upgraded, waits until the hub has
 * closed them all, keeps their TCP connections open (an attacker need not hang up), and repeats. It samples the
 * child's VmRSS every 10 ms from /proc.
 */
import { peakRss, rssMiB, stdoutLines } from "./child-rss";
import { type RawWs, rawWs } from "./rawws";

export interface WsBudgetRun {
  warmMiB: number;
  peakMiB: number;
  /** RSS once the last round's sockets were closed by the hub. */
  endMiB: number;
  /** Streams the hub closed as too slow. */
  tooSlow: number;
}

/** Run the child with a total budget of `budgetMiB`, `rounds` rounds of `sockets` silent clients each. */
export async function measureWsBudget(o: {
  budgetMiB: number;
  sockets: number;
  rounds: number;
  mode?: "follow" | "history";
}): Promise<WsBudgetRun> {
  const args = [process.execPath, import.meta.path, String(o.budgetMiB), o.mode ?? "follow"];
  const proc = Bun.spawn(args, { stdout: "pipe", stderr: "inherit" });
  const line = stdoutLines(proc, "ws-budget");
  const next = async (): Promise<any> => JSON.parse(await line());
  const held: RawWs[] = [];
  let peak: ReturnType<typeof peakRss> | undefined;
  try {
    const { port } = await next();
    const warmMiB = rssMiB(proc.pid);
    peak = peakRss(proc.pid, warmMiB);
    let stats = { open: 0, too_slow: 0, opened: 0 };
    for (let round = 1; round <= o.rounds; round++) {
      for (let i = 0; i < o.sockets; i++) {
        const ws = await rawWs(port, "/stream", {});
        ws.pause();
        held.push(ws);
      }
      const deadline = Date.now() + 60_000;
      while (stats.opened < round * o.sockets || stats.open > 0) {
        if (Date.now() > deadline) throw new Error(`round ${round}: hub still holds ${JSON.stringify(stats)}`);
        stats = await next();
      }
    }
    // what the closed sockets still hold shows once the child has settled
    for (let i = 0; i < 3; i++) await next();
    return { warmMiB, peakMiB: peak.peakMiB, endMiB: rssMiB(proc.pid), tooSlow: stats.too_slow };
  } finally {
    peak?.stop();
    for (const ws of held) ws.destroy();
    proc.kill();
    await proc.exited;
  }
}

async function child(budgetMiB: number, mode: string): Promise<void> {
  const { WsHub, WS_READ_LIMIT, WS_TIMINGS } = await import("../../src/http/ws");
  const { LogSink } = await import("../../src/log/logger");
  const hub = new WsHub(
    { clock: { now: () => Date.now() } as never, log: new LogSink({ stdout: false }).logger("ws"), recheck: async (p) => p },
    WS_TIMINGS,
    { maxOpen: 100_000, maxPerUser: 100_000, maxBuffered: budgetMiB * 1024 * 1024 },
  );
  const frame = JSON.stringify({ stream: "stdout", line: "x".repeat(32 * 1024) });
  const streams = new Set<ReturnType<typeof hub.add>>();
  let user = 0;
  let opened = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req, srv) {
      return srv.upgrade(req) ? undefined : new Response("upgrade only", { status: 400 });
    },
    // as src/app.ts configures them
    websocket: {
      maxPayloadLength: WS_READ_LIMIT,
      idleTimeout: 0,
      sendPings: false,
      perMessageDeflate: false,
      open(ws) {
        const sock = hub.add(ws as never, { user: { id: ++user } } as never);
        opened++;
        if (mode === "history") {
          for (let i = 0; i < 140 && sock.sendText(frame); i++);
          return sock.close(1000, "end of history");
        }
        streams.add(sock);
        sock.onClose(() => streams.delete(sock));
      },
      message(ws) {
        hub.touch(ws as never);
      },
      close(ws) {
        hub.closed(ws as never);
      },
    },
  });
  setInterval(() => {
    for (const s of streams) for (let i = 0; i < 8 && s.sendText(frame); i++);
  }, 2);
  setInterval(() => {
    const st = hub.stats();
    process.stdout.write(`${JSON.stringify({ open: st.open, too_slow: st.too_slow, opened })}\n`);
  }, 100);
  process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
}

if (import.meta.main) await child(Number(process.argv[2]), process.argv[3]);
