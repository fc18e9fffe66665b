/** The dashboard's stream (dashboard/ws.ts): reconnect 1 s doubling to 30 s, no retry after a clean close, keep-alive. */
import { describe, expect, it } from "bun:test";
import { backoffDelay, openStream, type SocketLike, type StreamStatus } from "../../../src/dashboard/ws";

class FakeSocket implements SocketLike {
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  sent: string[] = [];
  closedWith: number | undefined;
  send(data: string) {
    this.sent.push(data);
  }
  close(code?: number) {
    this.closedWith = code;
  }
}

/** Timers the test fires by hand. */
function fakeTimers() {
  let next = 1;
  const pending = new Map<number, { fn: () => void; ms: number; repeat: boolean }>();
  return {
    pending,
    timers: {
      setTimeout: (fn: () => void, ms: number) => {
        pending.set(next, { fn, ms, repeat: false });
        return next++;
      },
      clearTimeout: (id: unknown) => pending.delete(id as number),
      setInterval: (fn: () => void, ms: number) => {
        pending.set(next, { fn, ms, repeat: true });
        return next++;
      },
      clearInterval: (id: unknown) => pending.delete(id as number),
    },
    /** The one pending reconnect delay; fires it. */
    fireRetry(): number {
      const retries = [...pending].filter(([, t]) => !t.repeat);
      expect(retries.length).toBe(1);
      const [id, t] = retries[0];
      pending.delete(id);
      t.fn();
      return t.ms;
    },
  };
}

function harness() {
  const sockets: FakeSocket[] = [];
  const frames: unknown[] = [];
  const statuses: Array<{ s: StreamStatus; reconnect: boolean }> = [];
  const t = fakeTimers();
  const stream = openStream({
    url: "ws://x/stream",
    onFrame: (f) => frames.push(f),
    onStatus: (s, reconnect) => statuses.push({ s, reconnect }),
    createSocket: () => {
      const s = new FakeSocket();
      sockets.push(s);
      return s;
    },
    timers: t.timers,
  });
  const last = () => sockets[sockets.length - 1];
  return { sockets, frames, statuses, t, stream, last };
}

describe("dashboard stream reconnect", () => {
  it("backs off from 1 s, doubling, capped at 30 s", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 10].map(backoffDelay)).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });

  it("retries an unexpected close with growing delays and starts over once frames flow again", () => {
    const h = harness();
    h.last().onopen?.({});
    h.last().onmessage?.({ data: JSON.stringify("line one") });
    expect(h.frames).toEqual(["line one"]);

    const delays: number[] = [];
    for (let i = 0; i < 7; i++) {
      h.last().onclose?.({ code: 1006 });
      delays.push(h.t.fireRetry());
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    expect(h.sockets.length).toBe(8);

    // a healthy connection resets the backoff
    h.last().onopen?.({});
    h.last().onmessage?.({ data: JSON.stringify("line two") });
    expect(h.statuses.at(-1)).toEqual({ s: { state: "open" }, reconnect: true });
    h.last().onclose?.({ code: 1001 });
    expect(h.t.fireRetry()).toBe(1000);
  });

  it("does not retry a clean close (1000)", () => {
    const h = harness();
    h.last().onopen?.({});
    h.last().onclose?.({ code: 1000 });
    expect(h.statuses.at(-1)?.s).toEqual({ state: "closed", code: 1000 });
    expect([...h.t.pending.values()].length).toBe(0);
    expect(h.sockets.length).toBe(1);
  });

  it("stops for good when closed by the page, even while waiting to retry", () => {
    const h = harness();
    h.last().onclose?.({ code: 1006 });
    h.stream.close();
    expect(h.t.pending.size).toBe(0);
    expect(h.sockets.length).toBe(1);
  });

  it("sends a keep-alive while open", () => {
    const h = harness();
    h.last().onopen?.({});
    const keepAlive = [...h.t.pending.values()].find((t) => t.repeat)!;
    keepAlive.fn();
    expect(h.last().sent).toEqual(["ping"]);
    h.stream.close();
    expect(h.last().closedWith).toBe(1000);
  });
});
