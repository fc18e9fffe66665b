/** stopWithin lets in-flight requests finish in time and closes what is still open once the grace period is over. */
import { describe, expect, it } from "bun:test";
import { stopWithin } from "../../../src/lib/time";

describe("stopWithin", () => {
  it("lets in-flight requests finish when they do so in time", async () => {
    const server = Bun.serve({
      port: 0,
      fetch: async () => {
        await Bun.sleep(100);
        return new Response("done");
      },
    });
    const answer = fetch(`http://127.0.0.1:${server.port}/`).then((r) => r.text());
    await Bun.sleep(20);
    await stopWithin((force) => server.stop(force), 5_000);
    expect(await answer).toBe("done");
  });

  it("closes what is still open once the grace period is over", async () => {
    const server = Bun.serve({ port: 0, fetch: () => new Promise<Response>(() => {}) });
    const answer = fetch(`http://127.0.0.1:${server.port}/`).then(
      () => "answered",
      () => "failed",
    );
    await Bun.sleep(20);
    const started = Date.now();
    await stopWithin((force) => server.stop(force), 300);
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await answer).toBe("failed");
  });
});
