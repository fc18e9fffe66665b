/** Helpers for app tests on the real engine: a server wired to Docker, free ports, waiting on app state. */
import { createServer } from "node:net";
import type { DeployFrame } from "../../src/modules/deploys/output";
import { ensureTestImages, requireDocker } from "./docker";
import { type Client, until } from "./http";
import { startTestServer, type TestServer } from "./server";

export type { DeployFrame };

/** A server with Docker, short deploy timings and a slow periodic reconcile (tests drive it). */
export async function startDockerServer(over: Parameters<typeof startTestServer>[0] = {}, timings = {}): Promise<TestServer> {
  await requireDocker();
  await ensureTestImages();
  return startTestServer(over, {
    timings: {
      stabilizeMs: 30_000,
      settleMs: 500,
      reconcileEveryMs: 3_600_000,
      reconcileDebounceMs: 150,
      statusEveryMs: 2_000,
      ...timings,
    },
  });
}

/** A TCP port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

/** Wait until the app's view satisfies `pred` (the view is passed in); returns it. */
export async function waitApp(c: Client, slug: string, pred: (app: any) => boolean, timeout = 60_000): Promise<any> {
  let last: any;
  try {
    return await until(
      async () => {
        const r = await c.get(`/api/apps/${slug}`);
        last = r.json ?? r.status;
        return r.status === 200 && pred(r.json) ? r.json : null;
      },
      { timeout, every: 100, what: `app ${slug}` },
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}; last view: ${JSON.stringify(last)?.slice(0, 1500)}`);
  }
}

/** Wait until the app's last deploy has finished, and return the view. */
export const waitSettled = (c: Client, slug: string, timeout?: number) =>
  waitApp(c, slug, (a) => a.status !== "deploying" && a.last_deploy && a.last_deploy.status !== "running", timeout);

/** The app's activity, newest first. */
export async function appActivity(c: Client, slug: string): Promise<any[]> {
  return (await c.get(`/api/apps/${slug}/activity?limit=200`)).json.entries;
}

/** A small web app on the local test image. */
export function webCompose(port: number, extra = ""): string {
  return `services:
  web:
    image: sundeck-test/web:latest
    ports:
      - "${port}:8080"
    environment:
      GREETING: \${GREETING:-hello}
    stop_grace_period: 1s
${extra}`;
}
