/**
 * The readiness probe of a new (or restarted) replica in a rolling deploy: the HTTP health label, else the compose
 * healthcheck, else the port accepting connections; bounded by the window, answered with the last thing it saw.
 */
import type { RolloutSettings } from "../../compose/rollout-labels";
import { PUBLIC_NETWORK } from "../../docker/naming";
import { hostPort } from "../../docker/replicas";
import type { Engine } from "../../docker/types";
import { lastLines } from "./stabilize";

/** A container id as the deploy log shows it. */
export const short = (id: string) => id.slice(0, 12);

/** Wait `ms`, or less when `signal` aborts. */
export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((r) => {
    const t = setTimeout(r, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        r();
      },
      { once: true },
    );
  });

/**
 * Wait until a new replica is ready: the HTTP probe (`sundeck.healthcheck.path`, a 2xx or 3xx, on the first endpoint's
 * port), else its compose healthcheck reporting healthy, else every endpoint port accepting a connection. The error
 * names the last answer.
 */
export async function probe(
  engine: Engine,
  id: string,
  ports: readonly number[],
  s: RolloutSettings,
  windowMs: number,
  signal: AbortSignal,
): Promise<string | null> {
  const deadline = Date.now() + windowMs;
  let last = "no answer yet";
  while (!signal.aborted) {
    const info = await engine.inspect(id).catch(() => null);
    const state = info?.State;
    if (!state) return `new replica ${short(id)} is gone`;
    if (state.Status === "exited" || state.Status === "dead" || state.Restarting)
      return `new replica ${short(id)} exited${state.ExitCode !== undefined ? ` with code ${state.ExitCode}` : ""}${await lastLines(engine, id)}`;
    const health: string | undefined = state.Health?.Status;
    if (health === "unhealthy") return `new replica ${short(id)} is unhealthy${await lastLines(engine, id)}`;
    const ip: string | undefined = info?.NetworkSettings?.Networks?.[PUBLIC_NETWORK]?.IPAddress;
    if (state.Status === "running" && ip) {
      if (s.probe.path) {
        try {
          const r = await fetch(`http://${hostPort(ip, ports[0])}${s.probe.path}`, {
            redirect: "manual",
            signal: AbortSignal.timeout(s.probe.timeoutMs),
          });
          await r.arrayBuffer().catch(() => {});
          if (r.status >= 200 && r.status < 400) return null;
          last = `GET ${s.probe.path} answered ${r.status}`;
        } catch (e) {
          last = `GET ${s.probe.path}: ${(e as Error).message}`;
        }
      } else if (health !== undefined) {
        if (health === "healthy") return null;
        last = `its healthcheck is ${health}`;
      } else {
        const closed = await firstClosed(ip, ports, s.probe.timeoutMs);
        if (closed === null) return null;
        last = `port ${closed} does not accept connections`;
      }
    }
    if (Date.now() > deadline) return `new replica ${short(id)} not ready after ${Math.round(windowMs / 1000)}s: ${last}`;
    await sleep(s.probe.intervalMs, signal);
  }
  return "cancelled";
}

/** The first of the ports that does not accept a connection, or null when all do. */
async function firstClosed(ip: string, ports: readonly number[], timeoutMs: number): Promise<number | null> {
  for (const port of ports) if (!(await accepts(ip, port, timeoutMs))) return port;
  return null;
}

/** Whether `ip:port` accepts a TCP connection within `timeoutMs`. */
async function accepts(ip: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    Bun.connect({
      hostname: ip,
      port,
      socket: {
        open(sock) {
          clearTimeout(timer);
          sock.end();
          resolve(true);
        },
        data() {},
        error() {
          clearTimeout(timer);
          resolve(false);
        },
        connectError() {
          clearTimeout(timer);
          resolve(false);
        },
      },
    }).catch(() => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}
