/** The metering stream: bytes pass unchanged, hashed and counted, progress throttled on an injected clock. */
import { describe, expect, it } from "bun:test";
import { meter } from "../../../../../src/modules/backups/targets/meter";

function chunks(n: number, size: number): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    pull(c) {
      if (i++ < n) c.enqueue(new Uint8Array(size).fill(i));
      else c.close();
    },
  });
}

describe("meter", () => {
  it("hashes and counts what passes, unchanged", async () => {
    const m = meter(chunks(3, 5), {});
    const out = new Uint8Array(await new Response(m.stream).arrayBuffer());
    expect(out).toEqual(new Uint8Array([1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3]));
    expect(m.bytes()).toBe(15);
    expect(m.sha256()).toBe(new Bun.CryptoHasher("sha256").update(out).digest("hex"));
  });

  it("reports progress at most once per interval, and the total at the end", async () => {
    let t = 0;
    const seen: number[] = [];
    const src = chunks(10, 100);
    const m = meter(src, { progress: (b) => seen.push(b) }, { everyMs: 250, now: () => t });
    const reader = m.stream.getReader();
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
      t += 100; // ten chunks, 100 ms apart
    }
    expect(seen).toEqual([100, 400, 700, 1000, 1000]);
  });

  it("errors with the signal's reason when aborted while waiting for the source", async () => {
    const ac = new AbortController();
    let cancelled: unknown;
    const src = new ReadableStream<Uint8Array>({
      pull: () => new Promise(() => {}),
      cancel: (r) => {
        cancelled = r;
      },
    });
    const m = meter(src, { signal: ac.signal });
    const read = m.stream.getReader().read();
    ac.abort(new Error("stop now"));
    await expect(read).rejects.toThrow("stop now");
    expect((cancelled as Error).message).toBe("stop now");
  });

  it("says cancelled for a plain abort", async () => {
    const ac = new AbortController();
    ac.abort();
    const m = meter(chunks(1, 1), { signal: ac.signal });
    await expect(m.stream.getReader().read()).rejects.toThrow("cancelled");
  });

  it("stops the source while a consumer holds the stream", async () => {
    let cancelled = false;
    const src = new ReadableStream<Uint8Array>({
      pull: (c) => c.enqueue(new Uint8Array(1)),
      cancel: () => {
        cancelled = true;
      },
    });
    const m = meter(src, {});
    const reader = m.stream.getReader();
    await reader.read();
    await m.stop(new Error("upload failed"));
    expect(cancelled).toBe(true);
    await expect(reader.read()).rejects.toThrow("upload failed");
  });
});
