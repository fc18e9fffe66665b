/**
 * The proxy benchmark's upstream, run as its own process: Bun.serve with static routes, which Bun answers in native
 * code without calling into JavaScript, so it costs the least CPU per request of the servers at hand (measured on the
 * 2-core bench machine, wrk -t2 -c50 straight at it: ~59k req/s small and ~20k req/s 100 KiB, against ~29k and ~6k
 * for Caddy's static_response). It shares the machine with the proxy under test and wrk; the cheaper it is, the
 * more of the machine the proxies get, and it is the same upstream for every path.
 *
 *   bun scripts/bench/proxy-upstream.ts      prints `READY {"port":N}` once listening on 127.0.0.1
 */

/** The tiny body: 20 bytes. */
export const SMALL_BODY = "hello from upstream\n";
/** The large body: 100 KiB. */
export const LARGE_SIZE = 100 * 1024;

/**
 * Print `READY {"port":N}` for the benchmark and exit on SIGTERM, SIGINT or the end of stdin (the benchmark holds our
 * stdin open, so its end means the benchmark is gone).
 */
export function announce(server: { port?: number; stop(force?: boolean): unknown }): void {
  const stop = () => {
    server.stop(true);
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  process.stdin.on("end", stop);
  process.stdin.resume();
  console.log(`READY ${JSON.stringify({ port: server.port })}`);
}

if (import.meta.main) {
  const large = Buffer.alloc(LARGE_SIZE, "0123456789abcdef");
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    development: false,
    idleTimeout: 120,
    routes: {
      "/small": new Response(SMALL_BODY, { headers: { "content-type": "text/plain; charset=utf-8" } }),
      "/large": new Response(large, { headers: { "content-type": "application/octet-stream" } }),
    },
    fetch: () => new Response("not found\n", { status: 404 }),
  });
  announce(server);
}
