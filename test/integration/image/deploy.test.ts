/**
 * A deploy from inside the container image with the real compose v2 plugin (Debian 12 packages only the Python v1;
 * scripts/test-compose-v2.sh unpacks Debian 13's v2): the server in the image finds compose v2, `sundeck apply` from
 * the host deploys an app through it, the proxy in the container routes the app's domain to it, `sundeck remove`
 * takes it down.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { $ } from "bun";
import { PUBLIC_NETWORK } from "../../../src/docker/naming";
import { binary, runCli } from "../../helpers/binary";
import { ensureTestImages, removeProject, requireDocker } from "../../helpers/docker";
import { until } from "../../helpers/http";
import { tempDir } from "../../helpers/tmp";

const SCRIPT = resolve(import.meta.dir, "../../../scripts/image.ts");
const tag = `sundeck-test/image-deploy:t${process.pid}`;
const name = `sundeck-image-deploy-${process.pid}`;
const slug = `imgdeploy${process.pid}`;
const domain = `${slug}.test`;

/** The v2 plugin: $SUNDECK_TEST_COMPOSE_V2, one installed where Docker's packages put it, or the script's. */
function composeV2(): string {
  const candidates = [
    process.env.SUNDECK_TEST_COMPOSE_V2 ?? "",
    "/usr/libexec/docker/cli-plugins/docker-compose",
    "/usr/lib/docker/cli-plugins/docker-compose",
    "/usr/local/lib/docker/cli-plugins/docker-compose",
    "/opt/sundeck-test/compose-v2/docker-compose",
  ];
  const found = candidates.find((p) => p && existsSync(p));
  if (!found) throw new Error("no compose v2 plugin: run `sh scripts/test-compose-v2.sh` (.ci/run does)");
  return found;
}

const home = tempDir("sundeck-image-cli-");
const cli = (args: string[]) => runCli(args, { env: { HOME: home, XDG_CONFIG_HOME: join(home, ".config") } });
let proxyPort = "";

beforeAll(async () => {
  await requireDocker();
  await ensureTestImages();
  const plugin = composeV2();
  const built = await $`${process.execPath} ${SCRIPT} --binary ${binary()} --tag ${tag} --compose-plugin ${plugin}`
    .nothrow()
    .quiet();
  if (built.exitCode !== 0) throw new Error(`image build failed: ${built.stdout}${built.stderr}`);
  // the proxy reaches apps on the public network; another test may be creating it at the same moment
  await $`docker network create ${PUBLIC_NETWORK}`.nothrow().quiet();
  await $`docker network inspect ${PUBLIC_NETWORK}`.quiet();

  // the data dir at the same path inside as outside: the engine resolves an app's files against the host's
  const data = tempDir("sundeck-image-deploy-");
  await $`docker run -d --name ${name} --network ${PUBLIC_NETWORK} -v /var/run/docker.sock:/var/run/docker.sock -v ${data}:${data} -e SUNDECK_DATA_DIR=${data} -e SUNDECK_APPS_DIR=${join(data, "apps")} -p 127.0.0.1::8443 -p 127.0.0.1::8080 ${tag}`.quiet();
  const port = async (p: number) => (await $`docker port ${name} ${p}/tcp`.text()).trim().split("\n")[0].split(":").pop();
  const api = `http://127.0.0.1:${await port(8443)}`;
  proxyPort = (await port(8080)) ?? "";
  await until(async () => (await fetch(`${api}/api/health`, { signal: AbortSignal.timeout(1000) })).status === 200, {
    timeout: 20_000,
    what: "the container's /api/health",
  }).catch(async (e) => {
    throw new Error(`${e.message}\n${await $`docker logs ${name} 2>&1`.nothrow().text()}`);
  });
  await $`docker exec ${name} sundeck users create --username admin --password correct-horse-battery-9 --role super_admin`.quiet();
  const key = (await $`docker exec ${name} sundeck apikey create --username admin --name test`.text()).trim().split("\n").pop();
  const added = await cli(["context", "add", "image", "--url", api, "--api-key", key ?? ""]);
  if (added.code !== 0) throw new Error(`context add failed: ${added.stderr}`);
}, 120_000);

afterAll(async () => {
  await $`docker rm -f ${name}`.nothrow().quiet();
  await removeProject(`sundeck-${slug}`);
  await $`docker rmi -f ${tag}`.nothrow().quiet();
});

describe("deploying from the container image", () => {
  test("finds compose v2 in the image, deploys an app through it, and routes the app's domain", async () => {
    expect(await $`docker logs ${name} 2>&1`.text()).toMatch(/docker compose found flavor=v2 version=2\./);
    const dir = tempDir("sundeck-image-app-");
    await Bun.write(
      join(dir, "docker-compose.yml"),
      `services:\n  web:\n    image: sundeck-test/web:latest\n    labels:\n      sundeck.domain: ${domain}\n      sundeck.port: "8080"\n    stop_grace_period: 1s\n`,
    );
    const r = await cli(["apply", "-f", join(dir, "docker-compose.yml"), "--name", slug]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`deployed ${slug} version 1`);
    // compose v2 made the container (v1 labels it 1.x)
    const made =
      await $`docker ps --filter label=com.docker.compose.project=sundeck-${slug} --format ${'{{.Label "com.docker.compose.version"}}'}`.text();
    expect(made.trim()).toMatch(/^2\./);
    const res = await until(
      async () => {
        const got = await fetch(`http://127.0.0.1:${proxyPort}/`, { headers: { host: domain } });
        return got.status === 200 ? got : null;
      },
      { timeout: 15_000, what: "the app through the container's proxy" },
    );
    expect(res.status).toBe(200);
  }, 90_000);

  test("removes the app through compose v2", async () => {
    const r = await cli(["remove", "--name", slug]);
    expect(r.code).toBe(0);
    expect((await $`docker ps -a -q --filter label=com.docker.compose.project=sundeck-${slug}`.text()).trim()).toBe("");
  }, 60_000);
});
