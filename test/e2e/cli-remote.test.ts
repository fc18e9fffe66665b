/**
 * The remote command line as a user meets it: the compiled binary as client, talking to the compiled binary as
 * server, deploying on the real Docker engine. Contexts, apply with progress, safety refusals, list, pull, diff,
 * sync (with and without --prune), logs, lifecycle verbs, scale, versions, rollback, remove and Ctrl-C.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../helpers/apps";
import { binary, type RunningBinary, runCli, SERVE_ENV, startBinary } from "../helpers/binary";
import { docker, ensureTestImages, removeProject, requireDocker, uniqueName } from "../helpers/docker";
import { Client, until } from "../helpers/http";
import { tempDir } from "../helpers/tmp";

const run = uniqueName("clitest");
const WEB = `${run}-web`;
const WORKER = `${run}-worker`;
const EXTRA = `${run}-extra`;
const BAD = `${run}-bad`;
const FAILING = `${run}-failing`;
const SLOW = `${run}-slow`;
const SLUGS = [WEB, WORKER, EXTRA, BAD, FAILING, SLOW];

const dir = tempDir();
const config = join(dir, "config.yaml");
const home = tempDir();
const xdg = join(home, "xdg");
let server: RunningBinary;
let api: Client;
let key: string;
let webPort: number;

/** Run the client with a private HOME and config dir (and no SUNDECK_* from the test's environment). */
const cli = (args: string[], env: Record<string, string> = {}, cwd?: string) =>
  runCli(args, { env: { HOME: home, XDG_CONFIG_HOME: xdg, ...env }, cwd });

const webCompose = (port: number, extra = "") => `services:
  web:
    image: sundeck-test/web:latest
    ports:
      - "${port}:8080"
    environment:
      GREETING: \${GREETING:-hello}
    stop_grace_period: 1s
${extra}`;

const workerCompose = `services:
  worker:
    image: sundeck-test/busybox:latest
    command: ["sh", "-c", "echo worker says hi; echo worker complains >&2; trap 'exit 0' TERM; while true; do sleep 1; done"]
    stop_grace_period: 1s
`;

/** Write an app directory. */
function writeApp(root: string, slug: string, compose: string, env?: string): string {
  const d = join(root, slug);
  mkdirSync(d, { recursive: true });
  writeFileSync(join(d, "docker-compose.yml"), compose);
  if (env !== undefined) writeFileSync(join(d, ".env"), env);
  return d;
}

const containersOf = async (slug: string) =>
  (
    await docker("ps", "-a", "--filter", `label=com.docker.compose.project=sundeck-${slug}`, "--format", "{{.Names}} {{.State}}")
  ).stdout
    .split("\n")
    .filter(Boolean);

const oneLine = (stderr: string) => {
  expect(stderr.endsWith("\n")).toBe(true);
  expect(stderr.trim().split("\n")).toHaveLength(1);
};

beforeAll(async () => {
  await requireDocker();
  await ensureTestImages();
  const init = await runCli(["init", "--config", config, "--data-dir", join(dir, "data"), "--apps-dir", join(dir, "apps")]);
  expect(init.code).toBe(0);
  const user = await runCli(["users", "create", "--config", config, "--username", "deployer", "--role", "admin"], {
    env: { SUNDECK_PASSWORD: "deployer-password" },
  });
  expect(user.code).toBe(0);
  key = (await runCli(["apikey", "create", "--config", config, "--username", "deployer", "--name", "cli"])).stdout.trim();
  expect(key).toMatch(/^sd_[0-9a-f]{64}$/);
  server = await startBinary(["--config", config], { env: SERVE_ENV });
  api = new Client(server.url, { bearer: key });
  webPort = await freePort();
});

afterAll(async () => {
  await server?.stop();
  await Promise.all(SLUGS.map((s) => removeProject(`sundeck-${s}`, { volumes: true })));
});

describe("sundeck context", () => {
  it("adds a context to a private client.yaml, makes the first one current, and never prints the key", async () => {
    const add = await cli(["context", "add", "main", "--url", `${server.url}/`, "--api-key", key]);
    expect(add.code).toBe(0);
    expect(add.stdout).toContain("now current");
    const file = join(xdg, "sundeck", "client.yaml");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8")).toContain(`url: ${server.url}\n`);

    const other = `sd_${"0".repeat(64)}`;
    expect((await cli(["context", "add", "other", "--url", "http://127.0.0.1:9", "--api-key", other])).code).toBe(0);
    const list = await cli(["context", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).not.toContain(key);
    expect(list.stdout).toContain(`${key.slice(0, 7)}…${key.slice(-4)}`);
    expect(list.stdout).toMatch(/^\*\s+main\s/m);

    expect((await cli(["context", "use", "other"])).code).toBe(0);
    const json = JSON.parse((await cli(["context", "list", "--output", "json"])).stdout);
    expect(json).toEqual([
      { name: "main", url: server.url, api_key: `${key.slice(0, 7)}…${key.slice(-4)}`, current: false },
      { name: "other", url: "http://127.0.0.1:9", api_key: "sd_0000…0000", current: true },
    ]);
    const unreachable = await cli(["list"]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^sundeck: cannot reach http:\/\/127\.0\.0\.1:9/);
    expect((await cli(["context", "use", "main"])).code).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("refuses a duplicate name, a malformed key or URL, and an unknown context", async () => {
    const dup = await cli(["context", "add", "main", "--url", server.url, "--api-key", key]);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toBe("sundeck: context main exists; pass --force to replace it\n");
    const badKey = await cli(["context", "add", "x", "--url", server.url, "--api-key", "sd_1234"]);
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toContain("invalid API key");
    expect((await cli(["context", "add", "x", "--url", "ftp://host", "--api-key", key])).stderr).toContain("invalid URL");
    expect((await cli(["context", "use", "nope"])).code).toBe(1);
    expect((await cli(["context", "add", "x"])).code).toBe(2);
  });

  it("lets SUNDECK_URL and SUNDECK_API_KEY override the current context", async () => {
    const bare = { XDG_CONFIG_HOME: tempDir() };
    const none = await cli(["list"], bare);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("sundeck context add");
    const ok = await cli(["whoami"], { ...bare, SUNDECK_URL: server.url, SUNDECK_API_KEY: key });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe(`deployer (admin) on ${server.url}\n`);
    // the key alone overrides the current context's key
    const wrong = await cli(["list"], { SUNDECK_API_KEY: `sd_${"f".repeat(64)}` });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toBe("sundeck: Unauthorized (check SUNDECK_API_KEY)\n");
    expect((await cli(["whoami"])).stdout).toContain("(context main)");
  });
});

describe("sundeck apply", () => {
  it("deploys a compose file with its .env, printing progress, and the app answers on its loopback port", async () => {
    const src = tempDir();
    writeFileSync(join(src, "compose.yml"), webCompose(webPort));
    writeFileSync(join(src, ".env"), "GREETING=first\n");
    const r = await cli(["apply", "-f", join(src, "compose.yml"), "--name", WEB]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\[up\] deploying .* version 1$/m);
    expect(r.stdout).toMatch(new RegExp(`^\\[up\\] Creating sundeck-${WEB}[_-]web[_-]1 \\.\\.\\. done$`, "m"));
    expect(r.stdout).toEndWith(`deployed ${WEB} version 1 (web 127.0.0.1:${webPort}:8080/tcp)\n`);
    const res = await fetch(`http://127.0.0.1:${webPort}/`);
    expect(res.status).toBe(200);
    expect((await api.get(`/api/apps/${WEB}/env`)).json).toEqual({ GREETING: "first" });
  });

  it("refuses an unsafe compose file with the server's one line, exit 1, and deploys nothing", async () => {
    const src = tempDir();
    writeFileSync(
      join(src, "docker-compose.yml"),
      "services:\n  web:\n    image: sundeck-test/web:latest\n    privileged: true\n",
    );
    const r = await cli(["apply", "-d", src, "--name", BAD]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('sundeck: Bad Request: service "web": privileged is not allowed\n');
    expect((await api.get(`/api/apps/${BAD}`)).status).toBe(404);
    expect(await containersOf(BAD)).toEqual([]);
  });

  it("fails with the deploy's error when a container exits", async () => {
    const src = writeApp(
      tempDir(),
      FAILING,
      'services:\n  job:\n    image: sundeck-test/busybox:latest\n    command: ["sh", "-c", "echo boom >&2; exit 3"]\n',
    );
    const r = await cli(["apply", "-d", src]);
    expect(r.code).toBe(1);
    oneLine(r.stderr);
    expect(r.stderr).toStartWith(`sundeck: deploy of ${FAILING} failed: `);
    expect(r.stderr).toContain("exited with code 3");
    expect(r.stdout).toContain("[up] deploy failed:");
    // a failed app is removed like any other
    expect((await cli(["remove", "--name", FAILING, "--yes"])).code).toBe(0);
    expect((await api.get(`/api/apps/${FAILING}`)).status).toBe(404);
  });

  it("explains usage mistakes with exit 2", async () => {
    for (const args of [
      ["apply"],
      ["apply", "-f", "x.yml"],
      ["apply", "-f", "x.yml", "--name", "Not_A_Slug"],
      ["scale", "--app", WEB],
    ]) {
      const r = await cli(args);
      expect(r.code).toBe(2);
      oneLine(r.stderr);
    }
    const missing = await cli(["apply", "-f", join(dir, "nope.yml"), "--name", "nope"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no such file");
  });
});

describe("sundeck list", () => {
  it("shows a table and JSON", async () => {
    const text = await cli(["list"]);
    expect(text.code).toBe(0);
    const lines = text.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+STATUS\s+VERSION\s+SERVICES\s+UPDATED$/);
    expect(lines.find((l) => l.startsWith(`${WEB} `))).toMatch(
      new RegExp(`^${WEB}\\s+running\\s+1\\s+web 1/1\\s+\\d+[smhd] ago$`),
    );
    const json = await cli(["list", "--output", "json"]);
    const app = JSON.parse(json.stdout).find((a: any) => a.slug === WEB);
    expect(app).toMatchObject({ slug: WEB, status: "running", current_version: { version: 1 } });
    expect((await cli(["list", "--output", "yaml"])).code).toBe(2);
  });
});

describe("sundeck pull and diff", () => {
  const out = tempDir();

  it("pulls the compose file and a private .env that round-trip", async () => {
    const r = await cli(["pull", "--app", WEB, "-o", out]);
    expect(r.code).toBe(0);
    expect(readFileSync(join(out, WEB, "docker-compose.yml"), "utf8")).toBe(webCompose(webPort));
    expect(readFileSync(join(out, WEB, ".env"), "utf8")).toBe("GREETING=first\n");
    expect(statSync(join(out, WEB, ".env")).mode & 0o777).toBe(0o600);
    const same = await cli(["diff", "--app", WEB, "-d", out]);
    expect(same).toEqual({ code: 0, stdout: "", stderr: "" });
    const all = tempDir();
    expect((await cli(["pull", "--all", "-o", all])).code).toBe(0);
    expect(readFileSync(join(all, WEB, "docker-compose.yml"), "utf8")).toBe(webCompose(webPort));
    // applying what was pulled changes nothing on the server's side
    expect((await cli(["diff", "-d", all])).code).toBe(0);
  });

  it("prints a unified diff of the compose file and .env and exits 1 when they differ", async () => {
    writeFileSync(join(out, WEB, "docker-compose.yml"), webCompose(webPort).replace("GREETING:", "MODE: test\n      GREETING:"));
    writeFileSync(join(out, WEB, ".env"), "GREETING=second\n");
    const r = await cli(["diff", "--app", WEB], {}, out);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(
      [
        `--- server/${WEB}/docker-compose.yml`,
        `+++ ${WEB}/docker-compose.yml`,
        "@@ -4,5 +4,6 @@",
        "     ports:",
        `       - "${webPort}:8080"`,
        "     environment:",
        "+      MODE: test",
        `       GREETING: \${GREETING:-hello}`,
        "     stop_grace_period: 1s",
        `--- server/${WEB}/.env`,
        `+++ ${WEB}/.env`,
        "@@ -1 +1 @@",
        "-GREETING=*** (server)",
        "+GREETING=*** (local)",
        "",
      ].join("\n"),
    );
    const shown = await cli(["diff", "--app", WEB, "--show-values"], {}, out);
    expect(shown.stdout).toContain("-GREETING=first\n+GREETING=second\n");
  });

  it("patch(1) turns the server's file into the local one with that diff", async () => {
    const work = tempDir();
    mkdirSync(join(work, "server", WEB), { recursive: true });
    writeFileSync(join(work, "server", WEB, "docker-compose.yml"), webCompose(webPort));
    const r = await cli(["diff", "--app", WEB, "-f", join(out, WEB, "docker-compose.yml"), "--env-file", join(out, WEB, ".env")]);
    const composePart = r.stdout.slice(0, r.stdout.indexOf(`--- server/${WEB}/.env`));
    writeFileSync(join(work, "p.diff"), composePart);
    const p = Bun.spawn(["patch", "-s", join(work, "server", WEB, "docker-compose.yml"), join(work, "p.diff")], { cwd: work });
    expect(await p.exited).toBe(0);
    expect(readFileSync(join(work, "server", WEB, "docker-compose.yml"), "utf8")).toBe(
      readFileSync(join(out, WEB, "docker-compose.yml"), "utf8"),
    );
  });
});

describe("sundeck sync", () => {
  const root = tempDir();

  it("follows a detached deploy with watch", async () => {
    const src = writeApp(tempDir(), EXTRA, workerCompose.replace("worker says hi", "extra"));
    const r = await cli(["apply", "-d", src, "--detach"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`sundeck watch --app ${EXTRA}`);
    const w = await cli(["watch", "--app", EXTRA]);
    expect(w.code).toBe(0);
    expect(w.stdout).toMatch(/deploy of .* (succeeded)\n$|nothing is running/);
    await until(async () => (await api.get(`/api/apps/${EXTRA}`)).json?.status === "running", {
      timeout: 60_000,
      what: "the extra app",
    });
  });

  it("shows the plan with --dry-run and changes nothing", async () => {
    writeApp(root, WEB, webCompose(webPort), "GREETING=synced\n");
    writeApp(root, WORKER, workerCompose);
    const r = await cli(["sync", "-d", root, "--dry-run"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`would create ${WORKER}\n`);
    expect(r.stdout).toContain(`would update ${WEB} (env changed)\n`);
    expect(r.stdout).toContain(`keep ${EXTRA} (not in ${root}; --prune removes it)\n`);
    expect((await api.get(`/api/apps/${WORKER}`)).status).toBe(404);
  });

  it("deploys a changed and a new app and keeps a server app missing from the directory", async () => {
    const r = await cli(["sync", "-d", root]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`==> creating ${WORKER}\n`);
    expect(r.stdout).toContain(`==> updating ${WEB} (env changed)\n`);
    expect(r.stdout).toMatch(/^\[up\] /m);
    expect(r.stdout).toContain("sync: 1 created, 1 updated, 0 unchanged, 0 removed, 1 kept on the server only, 0 failed\n");
    expect((await api.get(`/api/apps/${WEB}/env`)).json).toEqual({ GREETING: "synced" });
    expect((await api.get(`/api/apps/${WORKER}`)).json.status).toBe("running");
    expect((await api.get(`/api/apps/${EXTRA}`)).status).toBe(200);
    expect((await cli(["diff", "-d", root])).stdout).toBe(`only on server: ${EXTRA}\n`);
  });

  it("removes it with --prune", async () => {
    const r = await cli(["sync", "-d", root, "--prune"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`==> removing ${EXTRA}\n`);
    expect(r.stdout).toContain("sync: 0 created, 0 updated, 2 unchanged, 1 removed, 0 failed\n");
    expect((await api.get(`/api/apps/${EXTRA}`)).status).toBe(404);
    expect(await containersOf(EXTRA)).toEqual([]);
    expect(await cli(["diff", "-d", root])).toEqual({ code: 0, stdout: "", stderr: "" });
  });
});

describe("sundeck logs", () => {
  it("prints the history of a service, stderr lines on stderr", async () => {
    const r = await until(
      async () => {
        const x = await cli(["logs", "--app", WORKER, "--service", "worker", "--tail", "10"]);
        return x.stdout.includes("worker says hi") ? x : null;
      },
      { timeout: 15_000, what: "the worker's log lines" },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("worker says hi\n");
    expect(r.stderr).toBe("worker complains\n");
  });

  it("follows with -f until Ctrl-C, which ends it quietly", async () => {
    const proc = Bun.spawn([binary(), "logs", "--app", WORKER, "--service", "worker", "-f", "-t"], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: xdg },
      stdout: "pipe",
      stderr: "pipe",
    });
    let out = "";
    const reader = (async () => {
      for await (const chunk of proc.stdout) out += new TextDecoder().decode(chunk);
    })();
    await until(() => out.includes("worker says hi"), { timeout: 15_000, what: "the followed lines" });
    expect(out).toMatch(/^\d{4}-\d\d-\d\dT\S+ worker says hi$/m);
    expect(proc.exitCode).toBeNull();
    proc.kill("SIGINT");
    expect(await proc.exited).toBe(0);
    await reader;
    expect(await new Response(proc.stderr).text()).toContain("worker complains");
  });

  it("defaults to the app's only service when it has no web", async () => {
    const r = await cli(["logs", "--app", WORKER, "--tail", "10"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("worker says hi\n");
    expect(r.stderr).toBe("worker complains\n");
  });

  it("fails with the server's message when the service has no container", async () => {
    const r = await cli(["logs", "--app", WORKER, "--service", "web"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`sundeck: not found: no container for service web of ${WORKER}\n`);
  });
});

describe("lifecycle verbs", () => {
  it("scales a service without published ports to 2 and refuses one with published ports", async () => {
    const r = await cli(["scale", "--app", WORKER, "worker=2"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`scaled ${WORKER}: worker=2\n`);
    const view = (await api.get(`/api/apps/${WORKER}`)).json;
    expect(view.services[0].containers.filter((c: any) => c.state === "running")).toHaveLength(2);
    const refused = await cli(["scale", "--app", WEB, "web=2"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`sundeck: Bad Request: service "web" cannot scale: publishes host port ${webPort}\n`);
  });

  it("stops, starts and restarts with progress", async () => {
    const stop = await cli(["stop", "--app", WORKER]);
    expect(stop.code).toBe(0);
    expect(stop.stdout).toMatch(/^\[down\] Stopping /m);
    expect(stop.stdout).toEndWith(`${WORKER} stopped\n`);
    expect((await api.get(`/api/apps/${WORKER}`)).json.status).toBe("stopped");
    expect((await containersOf(WORKER)).every((c) => c.endsWith(" exited"))).toBe(true);
    const start = await cli(["start", "--app", WORKER]);
    expect(start.code).toBe(0);
    expect(start.stdout).toEndWith(`${WORKER} started\n`);
    expect((await containersOf(WORKER)).filter((c) => c.endsWith(" running"))).toHaveLength(2);
    // on a terminal (script(1) gives it one) a spinner status line runs under the output
    const p = Bun.spawn(["script", "-qec", `${binary()} restart --app ${WORKER}`, "/dev/null"], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: xdg, TERM: "xterm" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const restart = { code: await p.exited, stdout: await new Response(p.stdout).text() };
    expect(restart.code).toBe(0);
    expect(restart.stdout).toContain(`⠋ restarting ${WORKER} 0s`);
    // the status line is cleared before each output line
    expect(restart.stdout).toContain("\r\x1b[K[restart] Restarting ");
    expect(restart.stdout).toEndWith(`\r\x1b[K${WORKER} restarted\r\n`);
    expect((await cli(["status", "--app", WORKER])).stdout).toMatch(new RegExp(`^${WORKER}: running`));
  });
});

describe("sundeck versions and rollback", () => {
  it("lists versions and rolls back to one by its number", async () => {
    const list = JSON.parse((await cli(["versions", "--app", WEB, "--output", "json"])).stdout);
    expect(list.map((v: any) => v.version)).toEqual([2, 1]);
    expect(list[0].current).toBe(true);
    const text = await cli(["versions", "--app", WEB]);
    expect(text.stdout).toMatch(/^VERSION\s+CURRENT\s+STATUS/);
    const r = await cli(["rollback", "--app", WEB, "--version", "1"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toEndWith(`${WEB} rolled back to version 1\n`);
    const app = (await api.get(`/api/apps/${WEB}`)).json;
    expect(app.current_version.version).toBe(1);
    expect((await api.get(`/api/apps/${WEB}/env`)).json).toEqual({ GREETING: "first" });
    const missing = await cli(["rollback", "--app", WEB, "--version", "9"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("has no version 9");
  });
});

describe("Ctrl-C during a wait", () => {
  it("exits 130, says how to follow or cancel, and leaves the deploy running on the server", async () => {
    const port = await freePort();
    const src = writeApp(
      tempDir(),
      SLOW,
      `services:
  web:
    image: sundeck-test/busybox:latest
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3; mkdir -p /w; echo ok > /w/index.html; httpd -f -p 8080 -h /w & wait"]
    ports: ["${port}:8080"]
    healthcheck:
      test: ["CMD", "test", "-f", "/w/index.html"]
      interval: 1s
      retries: 30
    stop_grace_period: 1s
`,
    );
    const proc = Bun.spawn([binary(), "apply", "-d", src], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: xdg },
      stdout: "pipe",
      stderr: "pipe",
    });
    let out = "";
    const reader = (async () => {
      for await (const chunk of proc.stdout) out += new TextDecoder().decode(chunk);
    })();
    await until(() => out.includes("waiting for the containers"), { timeout: 30_000, what: "the deploy to be under way" });
    proc.kill("SIGINT");
    expect(await proc.exited).toBe(130);
    await reader;
    const err = await new Response(proc.stderr).text();
    oneLine(err);
    expect(err).toContain(`sundeck watch --app ${SLOW}`);
    expect(err).toContain(`sundeck cancel --app ${SLOW}`);
    const app = await until(
      async () => {
        const a = (await api.get(`/api/apps/${SLOW}`)).json;
        return a?.last_deploy?.status === "succeeded" ? a : null;
      },
      { timeout: 60_000, what: "the deploy to finish on the server" },
    );
    expect(app.status).toBe("running");
  });
});

describe("sundeck remove", () => {
  it("removes an app and its containers, and names an unknown one", async () => {
    for (const slug of [WORKER, SLOW]) {
      const r = await cli(["remove", "--name", slug, "--yes"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toEndWith(`removed ${slug}\n`);
      expect((await api.get(`/api/apps/${slug}`)).status).toBe(404);
      expect(await containersOf(slug)).toEqual([]);
    }
    const r = await cli(["remove", "--name", WORKER, "--yes"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`sundeck: Not Found: no app named ${WORKER} on ${server.url} (context main)\n`);
  });
});
