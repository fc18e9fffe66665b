/**
 * Sundeck side of the deploy benchmark: a real server started in-process (temp data and apps dirs, TLS off, the
 * settle period given), an API key, a deploy through the HTTP API followed on deploy-logs, and the engine and compose
 * calls the deployer makes.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Config, defaults, validateConfig } from "../../src/config/schema";
import { type Ctx, createContext } from "../../src/context";
import type { ComposeCallOptions, ComposeDriver, Engine } from "../../src/docker/types";
import { LogSink } from "../../src/log/logger";
import type { DeployFrame } from "../../src/modules/deploys/output";
import { type RunningServer, startServer } from "../../src/server";

/** One engine or compose call the server made (performance.now times). */
export interface ServerCall {
  op: "imageExists" | "ensureNetwork" | "poll" | "status" | "composeUp" | "composePull";
  start: number;
  end: number;
  /** Compose calls: the first output line. */
  firstLine?: number;
}

/** A running in-process Sundeck. */
export interface Sundeck {
  ctx: Ctx;
  url: string;
  key: string;
  compose: string;
  /** Every containers/imageExists/ensureNetwork and compose up/pull call since start. */
  calls: ServerCall[];
  stop(): Promise<void>;
}

/** Start a server on an ephemeral port with a super-admin API key; throws when it found no Docker. */
export async function startSundeck(o: { settleMs: number }): Promise<Sundeck> {
  const dir = mkdtempSync(join(tmpdir(), "sundeck-bench-deploy-"));
  const config: Config = {
    ...defaults(),
    data_dir: join(dir, "data"),
    apps_dir: join(dir, "apps"),
    listen_addr: "127.0.0.1:0",
    management_addr: "127.0.0.1",
    management_port: 0,
    master_secret: randomBytes(24).toString("hex"),
    tls: { ...defaults().tls, mode: "off", email: "" },
    ratelimit: { requests: 1_000_000, window: "60s", burst: 1_000_000, by: "ip" },
  };
  validateConfig(config);
  let server: RunningServer | null = null;
  const stop = async () => {
    await server?.stop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ctx = createContext(config, { logs: new LogSink({ stdout: false }), timings: { settleMs: o.settleMs } });
    server = await startServer(ctx);
    if (ctx.docker.problem || !ctx.docker.engine || !ctx.docker.compose) throw new Error(`sundeck: ${ctx.docker.problem}`);
    const calls: ServerCall[] = [];
    ctx.docker.engine = timedEngine(ctx.docker.engine, calls);
    ctx.docker.compose = timedCompose(ctx.docker.compose, calls);
    const actor = { userId: null, name: "bench", source: "cli" as const, ip: null };
    const user = await ctx.users.create(
      { username: "bench", password: randomBytes(16).toString("hex"), role: "super_admin" },
      actor,
    );
    const key = ctx.apiKeys.create(user, "deploy benchmark", null, actor).key;
    return {
      ctx,
      url: server.url,
      key,
      compose: `${ctx.docker.compose.flavor} ${ctx.docker.compose.version}`,
      calls,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** The deployer reads `ctx.docker.engine` at each call, so a wrapper installed after start sees every call it makes. */
function timedEngine(real: Engine, calls: ServerCall[]): Engine {
  const time = async <T>(op: ServerCall["op"], p: Promise<T>): Promise<T> => {
    const start = performance.now();
    try {
      return await p;
    } finally {
      calls.push({ op, start, end: performance.now() });
    }
  };
  return {
    ...real,
    containers: (f) => time(f?.project ? "poll" : "status", real.containers(f)),
    imageExists: (ref) => time("imageExists", real.imageExists(ref)),
    ensureNetwork: (name) => time("ensureNetwork", real.ensureNetwork(name)),
  };
}

/** The same for the compose driver: `up` and `pull`, from the spawn to the end, with the first output line. */
function timedCompose(real: ComposeDriver, calls: ServerCall[]): ComposeDriver {
  const time = <O extends ComposeCallOptions>(
    op: ServerCall["op"],
    o: O | undefined,
    run: (o: O) => ReturnType<ComposeDriver["up"]>,
  ) => {
    const call: ServerCall = { op, start: performance.now(), end: Number.NaN };
    const onLine: ComposeCallOptions["onLine"] = (line, stream) => {
      call.firstLine ??= performance.now();
      o?.onLine?.(line, stream);
    };
    return run({ ...(o ?? ({} as O)), onLine }).finally(() => {
      call.end = performance.now();
      calls.push(call);
    });
  };
  return {
    flavor: real.flavor,
    version: real.version,
    up: (p, o) => time("composeUp", o, (x) => real.up(p, x)),
    pull: (p, services, o) => time("composePull", o, (x) => real.pull(p, services, x)),
    down: (p, o) => real.down(p, o),
    stop: (p, services, o) => real.stop(p, services, o),
    start: (p, services, o) => real.start(p, services, o),
    restart: (p, services, o) => real.restart(p, services, o),
  };
}

/** A deploy-logs frame with when it arrived (performance.now). */
export interface Seen extends DeployFrame {
  at: number;
}

/** What one deploy took; times in ms from the POST. */
export interface DeployRun {
  /** The POST answered 202. */
  accepted: number;
  /** Server timestamps (ms resolution) of Sundeck's own first line and of the first compose line on deploy-logs. */
  started: number;
  firstCompose: number;
  /** The done frame arrived. */
  done: number;
  frames: Seen[];
  /** performance.now of the POST. */
  t0: number;
}

const auth = (s: Sundeck) => ({ authorization: `Bearer ${s.key}`, origin: s.url });

/** Sundeck's own lines on deploy-logs; everything else of action `up` is compose output. */
const OWN = [/^deploying /, /^waiting for the containers/, /^pulling /, /^deploy failed/, /^deployed version/];

/**
 * Deploy `compose` as `slug` through the API: deploy-logs is opened first, then the POST; the deploy is over when the
 * done frame arrives, and its journal row must then say succeeded.
 */
export async function deploy(s: Sundeck, slug: string, compose: string, timeoutMs: number): Promise<DeployRun> {
  const frames: Seen[] = [];
  const ws = new WebSocket(`${s.url.replace(/^http/, "ws")}/api/apps/${slug}/deploy-logs`, { headers: auth(s) } as any);
  let finish: (f: Seen) => void = () => {};
  let fail: (e: Error) => void = () => {};
  const over = new Promise<Seen>((res, rej) => {
    finish = res;
    fail = rej;
  });
  over.catch(() => {}); // a failure before the POST is awaited is reported by the code that awaits it
  ws.addEventListener("message", (e) => {
    const f: Seen = { ...(JSON.parse(String(e.data)) as DeployFrame), at: performance.now() };
    frames.push(f);
    if (f.done) finish(f);
  });
  ws.addEventListener("close", (e) => fail(new Error(`deploy-logs closed before the done frame (${e.code} ${e.reason})`)));
  await new Promise<void>((res, rej) => {
    ws.addEventListener("open", () => res(), { once: true });
    ws.addEventListener("error", () => rej(new Error("deploy-logs websocket failed to open")), { once: true });
  });
  const timer = setTimeout(() => fail(new Error(`deploy of ${slug} not done after ${timeoutMs / 1000}s`)), timeoutMs);
  try {
    const wall0 = Date.now();
    const t0 = performance.now();
    const res = await fetch(`${s.url}/api/apps/deploy`, {
      method: "POST",
      headers: { ...auth(s), "content-type": "application/json" },
      body: JSON.stringify({ slug, compose }),
    });
    const accepted = performance.now() - t0;
    if (res.status !== 202) throw new Error(`POST /api/apps/deploy: ${res.status} ${(await res.text()).slice(0, 300)}`);
    const { deploy_id } = (await res.json()) as { deploy_id: number };
    const last = await over;
    const done = last.at - t0;
    const dep = await get(s, `/api/apps/${slug}/deploys/${deploy_id}`);
    if (dep.status !== "succeeded") {
      const tail = frames
        .slice(-8)
        .map((f) => `  ${f.action}: ${f.output}`)
        .join("\n");
      throw new Error(`deploy of ${slug} ${dep.status}: ${dep.error ?? last.output}\n${tail}`);
    }
    const since = (f: Seen | undefined) => (f ? Date.parse(f.timestamp) - wall0 : Number.NaN);
    const up = frames.filter((f) => f.action === "up" && !f.done);
    return {
      accepted,
      started: since(up.find((f) => /^deploying /.test(f.output))),
      firstCompose: since(up.find((f) => !OWN.some((r) => r.test(f.output)))),
      done,
      frames,
      t0,
    };
  } finally {
    clearTimeout(timer);
    ws.close();
  }
}

/** Remove the app with its volumes and wait until it is gone (GET answers 404). */
export async function remove(s: Sundeck, slug: string, timeoutMs: number): Promise<void> {
  const res = await fetch(`${s.url}/api/apps/${slug}?volumes=true`, { method: "DELETE", headers: auth(s) });
  if (res.status === 404) return;
  if (res.status !== 202) throw new Error(`DELETE /api/apps/${slug}: ${res.status} ${(await res.text()).slice(0, 300)}`);
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const r = await fetch(`${s.url}/api/apps/${slug}`, { headers: auth(s) });
    await r.arrayBuffer();
    if (r.status === 404) return;
    if (performance.now() > deadline) throw new Error(`app ${slug} still there ${timeoutMs / 1000}s after DELETE`);
    await Bun.sleep(50);
  }
}

async function get(s: Sundeck, path: string): Promise<any> {
  const r = await fetch(`${s.url}${path}`, { headers: auth(s) });
  if (!r.ok) throw new Error(`GET ${path}: ${r.status} ${(await r.text()).slice(0, 300)}`);
  return r.json();
}
