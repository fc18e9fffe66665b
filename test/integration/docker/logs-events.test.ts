/** Container logs and the event stream from the real engine: demultiplexing, timestamps, tail, since, follow, abort. */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { LogDecoder } from "../../../src/docker/streams";
import type { DockerEvent, Engine, LogLine } from "../../../src/docker/types";
import { dockerOk, ensureTestImages, removeByLabel, requireDocker, TEST_IMAGES, uniqueName, within } from "../../helpers/docker";
import { until } from "../../helpers/http";

const NAME = uniqueName("sdt-logs");
const LABEL = `io.sundeck.test=${NAME}`;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
let engine: Engine;

beforeAll(async () => {
  engine = await requireDocker();
  await ensureTestImages();
});

afterAll(async () => {
  await removeByLabel(LABEL);
});

/** Start a busybox container labelled for cleanup; returns its id. */
function run(script: string, ...flags: string[]): Promise<string> {
  return dockerOk("run", "-d", "--label", LABEL, ...flags, TEST_IMAGES.busybox, "sh", "-c", script);
}

async function collect(it: AsyncIterable<LogLine>): Promise<LogLine[]> {
  const out: LogLine[] = [];
  for await (const l of it) out.push(l);
  return out;
}

const text = (ls: LogLine[]) => ls.map((l) => l.line);

// Prints a history, then waits for /tmp/more and /tmp/stop so the test decides when the rest comes.
const SCRIPT = [
  "echo out1; echo err1 >&2",
  "i=0; while [ $i -lt 5 ]; do echo line$i; i=$((i+1)); done",
  "while [ ! -f /tmp/more ]; do sleep 0.05; done; echo later; echo later-err >&2",
  "while [ ! -f /tmp/stop ]; do sleep 0.05; done; echo bye",
].join("\n");

describe("engine: logs", () => {
  let id: string;
  let beforeMore: number;
  let follower: Promise<LogLine[]>;

  it("separates stdout from stderr and parses the timestamps", async () => {
    id = await run(SCRIPT);
    const lines = await until(
      async () => {
        const ls = await collect(engine.logs(id, {}));
        return ls.length >= 7 ? ls : null;
      },
      { timeout: 10000, what: "the history lines" },
    );
    // the engine copies the two pipes separately: order holds within a stream, not across them
    expect(text(lines.filter((l) => l.stream === "stdout"))).toEqual(["out1", "line0", "line1", "line2", "line3", "line4"]);
    expect(text(lines.filter((l) => l.stream === "stderr"))).toEqual(["err1"]);
    for (const l of lines) expect(l.ts).toMatch(RFC3339);
  });

  it("sends the last lines with tail", async () => {
    const all = await collect(engine.logs(id, {}));
    const last2 = await collect(engine.logs(id, { tail: 2 }));
    expect(last2).toEqual(all.slice(-2));
    expect(text(last2)).toContain("line4");
    expect(await collect(engine.logs(id, { tail: 0 }))).toEqual([]);
  });

  it("sends only what came after since, and follow ends when the container exits", async () => {
    beforeMore = Date.now() / 1000;
    follower = collect(engine.logs(id, { since: beforeMore, follow: true }));
    await dockerOk("exec", id, "touch", "/tmp/more");
    const after = await until(
      async () => {
        const ls = await collect(engine.logs(id, { since: beforeMore }));
        return ls.length >= 2 ? ls : null;
      },
      { timeout: 10000, what: "the lines after since" },
    );
    expect(after.map((l) => `${l.stream}:${l.line}`).sort()).toEqual(["stderr:later-err", "stdout:later"]);
    expect(Date.parse(after[0].ts!) / 1000).toBeGreaterThanOrEqual(beforeMore - 0.001);

    await dockerOk("exec", id, "touch", "/tmp/stop");
    const followed = await within(follower, 15000, "the follow to end when the container exited");
    expect(text(followed).sort()).toEqual(["bye", "later", "later-err"]);
    expect(text(followed).at(-1)).toBe("bye");
  });

  it("reads a TTY container's raw stream as stdout lines without carriage returns", async () => {
    const tty = await run("echo first; echo second >&2; printf 'no newline'", "-t");
    const lines = await until(
      async () => {
        const ls = await collect(engine.logs(tty, {}));
        return ls.length >= 3 ? ls : null;
      },
      { timeout: 10000, what: "the TTY container's output" },
    );
    expect(text(lines)).toEqual(["first", "second", "no newline"]);
    expect(lines.every((l) => l.stream === "stdout" && l.ts !== null)).toBe(true);
  });

  it("a follow ends quietly on abort, and a consumer may stop early", async () => {
    const ticker = await run("trap 'exit 0' TERM; while :; do echo tick; sleep 0.05 & wait $!; done");
    const ctl = new AbortController();
    const got: LogLine[] = [];
    for await (const l of engine.logs(ticker, { follow: true, signal: ctl.signal })) {
      got.push(l);
      if (got.length === 3) ctl.abort();
    }
    expect(got.length).toBeGreaterThanOrEqual(3);
    expect(got.every((l) => l.line === "tick")).toBe(true);

    let n = 0;
    for await (const _ of engine.logs(ticker, { follow: true })) if (++n === 2) break;
    expect(n).toBe(2);
    expect(await collect(engine.logs(ticker, { follow: true, signal: AbortSignal.abort() }))).toEqual([]);
  });

  it("decodes frames split at any byte, across chunk boundaries", () => {
    const frame = (stream: number, s: string) => {
      const payload = new TextEncoder().encode(s);
      const head = new Uint8Array(8);
      head[0] = stream;
      new DataView(head.buffer).setUint32(4, payload.length);
      return [...head, ...payload];
    };
    const bytes = [
      ...frame(1, "2024-05-01T10:00:00.123456789Z héllo\n"),
      ...frame(2, "2024-05-01T10:00:01Z oops\r\n"),
      ...frame(1, "2024-05-01T10:00:02Z par"),
      ...frame(1, "tial\n"),
    ];
    const d = new LogDecoder(false);
    const out: LogLine[] = [];
    for (const b of bytes) out.push(...d.push(new Uint8Array([b])));
    out.push(...d.end());
    expect(out).toEqual([
      { ts: "2024-05-01T10:00:00.123456789Z", stream: "stdout", line: "héllo" },
      { ts: "2024-05-01T10:00:01Z", stream: "stderr", line: "oops" },
      { ts: "2024-05-01T10:00:02Z", stream: "stdout", line: "partial" },
    ]);
  });
});

describe("engine: events", () => {
  it("receives start and die of a container, and ends without error on abort", async () => {
    const ctl = new AbortController();
    const seen: DockerEvent[] = [];
    const since = Date.now() / 1000 - 1;
    const reading = (async () => {
      for await (const ev of engine.events({ filters: { type: ["container"], label: [LABEL] }, since, signal: ctl.signal })) {
        seen.push(ev);
      }
    })();
    const id = await run("exit 0");
    await until(() => seen.some((e) => e.id === id && e.action === "die"), { timeout: 10000, what: "the die event" });
    ctl.abort();
    await reading;

    const start = seen.find((e) => e.id === id && e.action === "start")!;
    expect(start).toBeDefined();
    expect(start.type).toBe("container");
    expect(start.attributes["io.sundeck.test"]).toBe(NAME);
    expect(start.attributes.image).toBe(TEST_IMAGES.busybox);
    expect(Math.abs(start.time - Date.now() / 1000)).toBeLessThan(60);
    const die = seen.find((e) => e.id === id && e.action === "die")!;
    expect(die.attributes.exitCode).toBe("0");
    expect(seen.indexOf(start)).toBeLessThan(seen.indexOf(die));
  });

  it("an abort while the stream is connected and quiet ends it at once", async () => {
    const ctl = new AbortController();
    const label = `io.sundeck.test.quiet=${NAME}`;
    const seen: DockerEvent[] = [];
    const reading = (async () => {
      for await (const ev of engine.events({ filters: { type: ["container"], label: [label] }, signal: ctl.signal })) {
        seen.push(ev);
      }
    })();
    // keep starting labelled containers until one shows up: then the stream is surely connected
    await until(
      async () => {
        await dockerOk("run", "-d", "--label", LABEL, "--label", label, TEST_IMAGES.busybox, "true");
        return seen.some((e) => e.action === "die");
      },
      { timeout: 10000, every: 200, what: "an event on the live stream" },
    );
    const t0 = Date.now();
    ctl.abort();
    await reading;
    expect(Date.now() - t0).toBeLessThan(1000);
  });
});
