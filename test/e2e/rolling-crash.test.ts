/**
 * kill -9 of Sundeck in the middle of a rolling deploy, and the restart converges: the new replica started before
 * the switch is removed, the old one serves throughout, the interrupted deploy runs again and replaces it.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { join } from "node:path";
import { initConfig, type RunningBinary, SERVE_ENV, startBinary } from "../helpers/binary";
import { docker, ensureTestImages, removeProject, requireDocker } from "../helpers/docker";
import { Client, until } from "../helpers/http";
import { tempDir } from "../helpers/tmp";

const SLUG = "e2e-roll-crash";
const HOST = "crash.roll.test";
const dir = tempDir();
let server: RunningBinary | undefined;
let config: string;
let key: string;

const compose = (v: number, delay: number) => `services:
  web:
    image: sundeck-test/web:latest
    command: ["sh", "-c", "sleep ${delay}; exec /entry.sh"]
    stop_grace_period: 1s
    environment:
      V: "${v}"
    labels:
      sundeck.domain: ${HOST}
      sundeck.port: "8080"
`;

const containersOf = async () =>
  (await docker("ps", "-aq", "--no-trunc", "--filter", `label=com.docker.compose.project=sundeck-${SLUG}`)).stdout
    .split("\n")
    .filter(Boolean);

async function proxyPort(api: Client): Promise<number> {
  return (await api.get("/api/system/info")).json.proxy_port;
}
async function answer(port: number): Promise<string | null> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/`, { headers: { host: HOST }, signal: AbortSignal.timeout(3000) });
    return r.status === 200 ? (await r.text()).trim() : null;
  } catch {
    return null;
  }
}

beforeAll(async () => {
  await requireDocker();
  await ensureTestImages();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  ({ config, key } = await initConfig(dir));
});
afterAll(async () => {
  await server?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
});

describe("kill -9 during a rolling deploy", () => {
  it("converges on restart: the old replica keeps serving, the new one is removed, the deploy runs again", async () => {
    server = await startBinary(["--config", config], { env: SERVE_ENV });
    let api = new Client(server.url, { bearer: key });
    expect((await api.post("/api/apps/deploy", { slug: SLUG, compose: compose(0, 0) })).status).toBe(202);
    let port = await proxyPort(api);
    const old = await until(() => answer(port), { timeout: 60_000, what: "the first version to answer" });
    const [oldId] = await containersOf();

    // a new version slow to listen: killed while its replica is being probed beside the old one
    expect((await api.post("/api/apps/deploy", { slug: SLUG, compose: compose(1, 8) })).status).toBe(202);
    const both = await until(async () => ((await containersOf()).length === 2 ? containersOf() : null), {
      timeout: 30_000,
      what: "the new replica to start beside the old one",
    });
    const newId = both.find((id) => id !== oldId)!;
    server.proc.kill("SIGKILL");
    await server.proc.exited;

    server = await startBinary(["--config", config], { env: SERVE_ENV });
    api = new Client(server.url, { bearer: key });
    port = await proxyPort(api);
    // the replica started before the crash goes; the old one serves meanwhile
    await until(async () => !(await containersOf()).includes(newId), { timeout: 30_000, what: "the orphan replica to go" });
    expect(await answer(port)).toBe(old);
    expect(server.output()).toContain("a rolling deploy was cut short: converging");

    // the interrupted deploy runs again and replaces the old replica, with one set of containers at the end
    const app = await until(
      async () => {
        const a = (await api.get(`/api/apps/${SLUG}`)).json;
        return a?.status === "running" && a.last_deploy?.status === "succeeded" ? a : null;
      },
      { timeout: 90_000, what: "the deploy run again to succeed" },
    );
    expect(app.services[0].containers.length).toBe(1);
    const now = await containersOf();
    expect(now).toHaveLength(1);
    expect(now).not.toContain(oldId);
    expect(await until(async () => ((await answer(port)) !== old ? answer(port) : null), { what: "the new version" })).not.toBe(
      old,
    );
    const db = new Database(join(dir, "data", "sundeck.db"), { readonly: true });
    try {
      expect(db.query("SELECT count(*) AS n FROM rollouts").get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  }, 240_000);
});
