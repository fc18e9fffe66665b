/**
 * The compiled command line where it used to say too little or the wrong thing: `--context` before the command, an
 * endpoint's TLS mode in `status`, a URL that is not a Sundeck API (the proxy port, another web server), a logs
 * stream the server ends with an error, and the start banner once a user exists.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { initConfig, type RunningBinary, runCli, SERVE_ENV, startBinary } from "../helpers/binary";
import { ensureTestImages, removeProject, requireDocker, uniqueName } from "../helpers/docker";
import { Client, until } from "../helpers/http";
import { tempDir } from "../helpers/tmp";

const SLUG = uniqueName("climsg");
const dir = tempDir();
const home = tempDir();
let server: RunningBinary;
let key: string;
let config: string;

/** The client with a private HOME and config dir, and `env` (no SUNDECK_* from the test's environment). */
const cli = (args: string[], env: Record<string, string> = {}) =>
  runCli(args, { env: { HOME: home, XDG_CONFIG_HOME: home, ...env } });

beforeAll(async () => {
  await requireDocker();
  await ensureTestImages();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  ({ config, key } = await initConfig(dir));
  server = await startBinary(["--config", config], { env: SERVE_ENV });
  expect((await cli(["context", "add", "main", "--url", server.url, "--api-key", key])).code).toBe(0);
});

afterAll(async () => {
  await server?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
});

describe("--context before the command", () => {
  it("selects that context for the call, and refuses an unknown one naming the known ones", async () => {
    const ok = await cli(["--context", "main", "whoami"]);
    expect(ok).toEqual({ code: 0, stdout: `ops (admin) on ${server.url} (context main)\n`, stderr: "" });
    expect((await cli(["--context=main", "list", "--output", "json"])).code).toBe(0);
    const wrong = await cli(["--context", "wrong", "list"]);
    expect(wrong).toEqual({ code: 1, stdout: "", stderr: 'sundeck: unknown context "wrong" (known: main)\n' });
    expect((await cli(["list", "--context", "wrong"])).stderr).toBe('sundeck: unknown context "wrong" (known: main)\n');
    const local = await cli(["--context", "main", "init"]);
    expect(local.code).toBe(2);
    expect(local.stderr).toBe("sundeck: --context is for the commands that talk to a server, not init (see sundeck --help)\n");
  });
});

describe("sundeck status", () => {
  it("names the server's TLS mode for an endpoint without its own, never null", async () => {
    const api = new Client(server.url, { bearer: key });
    const compose = `services:
  web:
    image: sundeck-test/web:latest
    expose: ["8080"]
    labels:
      sundeck.domain: ${SLUG}.localhost
    stop_grace_period: 1s
`;
    expect((await api.post("/api/apps/deploy", { slug: SLUG, compose })).status).toBe(202);
    await until(async () => (await api.get(`/api/apps/${SLUG}`)).json?.status === "running", {
      timeout: 60_000,
      what: "the app to run",
    });
    const r = await cli(["status", "--app", SLUG]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`endpoint: ${SLUG}.localhost/ -> web:8080 (tls off, the server's mode)\n`);
    expect(r.stdout).not.toContain("null");
  }, 90_000);
});

describe("a URL that is not a Sundeck API", () => {
  it("says so for the proxy port, and for another web server's 404", async () => {
    const info = (await new Client(server.url, { bearer: key }).get("/api/system/info")).json;
    const proxy = `http://127.0.0.1:${info.proxy_port}`;
    const viaProxy = await cli(["list"], { SUNDECK_URL: proxy, SUNDECK_API_KEY: key });
    expect(viaProxy).toEqual({
      code: 1,
      stdout: "",
      stderr: `sundeck: ${proxy} does not answer as a Sundeck API (GET /api/health: 404); is this the management port (default 8443)?\n`,
    });
    // a server answering 404 in Sundeck's own format is still probed: /api/health tells
    const other = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("Not Found", { status: 404 }) });
    try {
      const url = `http://127.0.0.1:${other.port}`;
      const r = await cli(["status", "--app", "blog"], { SUNDECK_URL: url, SUNDECK_API_KEY: key });
      expect(r.stderr).toBe(
        `sundeck: ${url} does not answer as a Sundeck API (GET /api/health: 404); is this the management port (default 8443)?\n`,
      );
    } finally {
      other.stop(true);
    }
    // a real Sundeck's 404 stays its own
    const missing = await cli(["status", "--app", "no-such-app"]);
    expect(missing.stderr).toBe(`sundeck: Not Found: no app named no-such-app on ${server.url} (context main)\n`);
  });
});

describe("sundeck logs", () => {
  it("fails with the close code and reason when the server ends the stream with an error", async () => {
    const fake = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (req, srv) => (srv.upgrade(req) ? undefined : new Response("Not Found", { status: 404 })),
      websocket: {
        open: (ws) => ws.close(1011, "stream failed"),
        message: () => {},
      },
    });
    try {
      const r = await cli(["logs", "--app", "blog"], { SUNDECK_URL: `http://127.0.0.1:${fake.port}`, SUNDECK_API_KEY: key });
      expect(r).toEqual({ code: 1, stdout: "", stderr: "sundeck: the logs stream closed with 1011: stream failed\n" });
    } finally {
      fake.stop(true);
    }
  });
});

describe("the start banner", () => {
  it("asks to set up the first user only while there is none", async () => {
    const cwd = tempDir();
    const env = { SUNDECK_MANAGEMENT_PORT: "0", SUNDECK_LISTEN_ADDR: "127.0.0.1:0" };
    const first = await startBinary([], { env, cwd });
    try {
      await until(() => first.output().includes("Sundeck is running."), { what: "the banner" });
      expect(first.output()).toContain(`Sundeck is running. Open ${first.url} to set up the first user.\n`);
      const setup = await new Client(first.url).post("/api/setup", { username: "root", password: "correct-horse-battery" });
      expect(setup.status).toBe(201);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    const again = await startBinary([], { env, cwd });
    try {
      await until(() => again.output().includes("Sundeck is running."), { what: "the banner" });
      expect(again.output()).toContain(`Sundeck is running. Dashboard: ${again.url}\n`);
      expect(again.output()).not.toContain("first user");
    } finally {
      expect(await again.stop()).toBe(0);
    }
  });
});
