/**
 * Starting and stopping the server. Start order makes the API's first answer mean ready: Docker detected, container
 * state read, the proxy listening with every app's routes, and only then the management API on
 * management_addr:management_port, then background jobs (`sundeck serve` starts them once the first requests had their
 * turn). Stop is graceful (sockets get 1001, in-flight requests finish, the database closes).
 */
import { createApp } from "./app";
import type { Ctx } from "./context";
import { MAX_BODY, MIB } from "./http/body";
import { installMemoryDump, startTrace } from "./lib/debug-memory";
import { ensurePrivateDir } from "./lib/fs";
import { stopWithin } from "./lib/time";
import { startNightly } from "./modules/activity/retention";
import { COMMIT, VERSION } from "./version";

/** On shutdown, running deploys get this long to finish before they are cancelled. */
const DRAIN_GRACE_MS = 20_000;
/** How long in-flight requests get to finish on shutdown before their connections are closed. */
const STOP_GRACE_MS = 10_000;

/** Idle connections close after this many seconds (SPEC: idle timeout 120 s). */
export const IDLE_TIMEOUT_S = 120;

export interface RunningServer {
  /** Base URL of the management API and dashboard. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * What `sundeck serve` waits after the API listens before starting the background jobs: their first steps (the
 * retention prune, the rollup catch-up) run synchronously for tens of ms, and the first requests after ready come
 * first. Recovery (backups, the reconciler) is not delayed: see startServer.
 */
export const BACKGROUND_AFTER_MS = 500;

export interface StartOptions {
  /** Start the background jobs this long after the API listens; 0 (the default) starts them before returning. */
  backgroundAfterMs?: number;
}

/** Start serving. */
export async function startServer(ctx: Ctx, opts: StartOptions = {}): Promise<RunningServer> {
  const log = ctx.logs.logger("server");
  const c = ctx.config;
  const trace = startTrace();
  trace.mark("start_server");
  ensurePrivateDir(c.data_dir);
  // ready before the API answers: a deploy right after the first 200 from /api/health must find Docker
  await ctx.docker.detect();
  trace.mark("docker_detected");
  await ctx.status.start();
  trace.mark("status_read");
  const hostname = !c.management_addr || c.management_addr === "0.0.0.0" ? "0.0.0.0" : c.management_addr;
  // the proxy listens before the API: the API's first answer (and /api/health's first 200) means ready
  let apiPort = c.management_port;
  try {
    await ctx.edge.start({ managementPort: () => apiPort });
    trace.mark("proxy_listening");
  } catch (e) {
    // the proxy cannot listen: stop cleanly so the process can report it and exit
    ctx.status.stop();
    ctx.db.close();
    throw e;
  }
  const app = createApp(ctx);
  trace.mark("app_built");
  try {
    app.listen({
      hostname,
      port: c.management_port,
      reusePort: false,
      idleTimeout: IDLE_TIMEOUT_S,
      // our own per-route limits answer 413 in text; this only stops the absurd
      maxRequestBodySize: MAX_BODY + MIB,
      development: false,
    });
  } catch (e) {
    await ctx.edge.stop(0);
    ctx.status.stop();
    ctx.db.close();
    throw e;
  }
  const server = app.server!;
  trace.mark("api_listening");
  if (server.port !== apiPort) {
    apiPort = server.port!;
    ctx.edge.refresh();
  }
  const shownHost = hostname === "0.0.0.0" ? "127.0.0.1" : hostname.includes(":") ? `[${hostname}]` : hostname;
  const url = `http://${shownHost}:${server.port}`;
  // Recovery runs now, before any request is handled (nothing below awaits before startServer returns): it takes the
  // deploys, writes, backup runs and restores recorded as running for ones a killed process left, and sweeps the
  // uploads dir; run later, it would take work a request had just started for interrupted (a live deploy run again, an
  // upload's temp file deleted). Backups: that recovery, the temp sweeps, the schedules, missed runs once
  void ctx.backups.start().catch((e) => log.error("backups failed to start", { error: (e as Error).message }));
  // the first pass may start deploys; it runs in the background so the API is up at once
  void ctx.reconciler.start().catch((e) => log.error("reconciler failed to start", { error: (e as Error).message }));
  let stopNightly = () => {};
  const startBackground = () => {
    stopNightly = startNightly(ctx);
    // warns loudly when webhooks.allow_private_destinations is on
    ctx.webhooks.start();
    // catches up on rollups in the background, then collects every 10 s
    void ctx.metrics.start();
    // follows the metrics ticks, and judges the other kinds on its own timer
    ctx.alerts.start();
    // git sync: first contact with the remote, then the poll loop; all in the background
    void ctx.gitSync.start().catch((e) => log.error("git sync failed to start", { error: (e as Error).message }));
  };
  // not part of ready (docs/benchmarks.md, start to ready): Docker, the container state and the proxy's routes are
  const background = opts.backgroundAfterMs ? setTimeout(startBackground, opts.backgroundAfterMs) : undefined;
  if (!background) startBackground();
  log.info(`sundeck ${VERSION} (${COMMIT}) management api and dashboard on ${url}`, {
    config: ctx.configSource ?? "embedded default",
    data_dir: c.data_dir,
    tls_mode: c.tls.mode,
  });
  trace.mark("ready");
  if (Object.keys(trace.done()).length > 0) log.info("start phases (ms since process start)", trace.done());
  const removeMemoryDump = installMemoryDump(log, ctx.db.sqlite);

  let stopping: Promise<void> | undefined;
  return {
    url,
    port: server.port!,
    stop: () =>
      (stopping ??= (async () => {
        log.info("shutting down");
        removeMemoryDump();
        ctx.docker.stop();
        // jobs not started yet are not started; stopping one that never started is a no-op
        clearTimeout(background);
        stopNightly();
        ctx.reconciler.stop();
        // a cycle in flight ends first (its network calls have deadlines)
        await ctx.gitSync.stop();
        await ctx.edge.stop(STOP_GRACE_MS);
        await ctx.deployer.drain(DRAIN_GRACE_MS);
        // running backups and restores are cancelled and recorded as failed, their partial objects removed
        await ctx.backups.stop();
        ctx.alerts.stop();
        ctx.status.stop();
        await ctx.metrics.stop();
        ctx.ws.shutdown();
        ctx.logHub.stop();
        await ctx.webhooks.stop();
        await stopWithin((force) => app.stop(force), STOP_GRACE_MS);
        ctx.db.close();
      })()),
  };
}
