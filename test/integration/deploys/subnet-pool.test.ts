/**
 * App networks take their subnets from Sundeck's pool (docker.subnet_pool), on the real engine and the compose in
 * use: each new network gets a free block, recorded and named again after a restart of the server, given back when
 * the app is removed and then reused; networks the file configures itself, and networks that already exist, are left
 * as they are; a pool with nothing free fails the deploy in words naming the setting.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { appSubnets } from "../../../src/db/schema";
import { startDockerServer, waitApp } from "../../helpers/apps";
import { docker, dockerOk, removeNetwork, removeProject } from "../../helpers/docker";
import { until } from "../../helpers/http";
import type { TestServer } from "../../helpers/server";

// a pool of four /28 blocks, clear of anything a stock engine or this host uses
const POOL = "10.214.77.0/26";
const BLOCKS = ["10.214.77.0/28", "10.214.77.16/28", "10.214.77.32/28", "10.214.77.48/28"];
const A = "pool-a";
const B = "pool-b";
const OWN = "pool-own";
const OLD = "pool-old";
const C = "pool-c";
const D = "pool-d";
const ALL = [A, B, OWN, OLD, C, D];
// a network made outside Sundeck, over the pool's third block
const SQUATTER = "sundeck-test-pool-squatter";

let s: TestServer;

const web = (extra = "") => `services:
  web:
    image: sundeck-test/web:latest
    stop_grace_period: 1s
${extra}`;

/** Two services, one on `default` and `back`, one on `back` only. */
const BACKED = web(`    networks: [default, back]
  db:
    image: sundeck-test/web:latest
    stop_grace_period: 1s
    networks: [back]
networks:
  back: {}
`);

/** The subnets of a project's network, as the engine has them. */
const subnetOf = async (network: string) =>
  (await dockerOk("network", "inspect", "--format", "{{range .IPAM.Config}}{{.Subnet}} {{end}}", network)).trim();

const deploy = async (slug: string, compose: string) => {
  const r = await s.root.post("/api/apps/deploy", { slug, compose });
  expect(r.status).toBe(202);
  return waitApp(s.root, slug, (a) => a.last_deploy?.status === "succeeded" || a.last_deploy?.status === "failed", 90_000);
};

const records = () =>
  s.ctx.db.orm
    .select()
    .from(appSubnets)
    .all()
    .map((r) => `${r.slug}/${r.network}=${r.subnet}`)
    .sort();

const start = () => startDockerServer({ docker: { subnet_pool: POOL, subnet_prefix: 28 } });

beforeAll(async () => {
  for (const slug of ALL) await removeProject(`sundeck-${slug}`, { volumes: true });
  await removeNetwork(SQUATTER);
  await removeNetwork(`sundeck-${OLD}_default`);
  s = await start();
});
afterAll(async () => {
  await s?.stop();
  for (const slug of ALL) await removeProject(`sundeck-${slug}`, { volumes: true });
  await removeNetwork(SQUATTER);
  await removeNetwork(`sundeck-${OLD}_default`);
});

describe("the subnet pool", () => {
  it("gives each new app network the next free block, and records it", async () => {
    expect((await deploy(A, web())).last_deploy.status).toBe("succeeded");
    expect(await subnetOf(`sundeck-${A}_default`)).toBe(BLOCKS[0]);
    const b = await deploy(B, BACKED);
    expect(b.last_deploy.status).toBe("succeeded");
    expect(await subnetOf(`sundeck-${B}_default`)).toBe(BLOCKS[1]);
    expect(await subnetOf(`sundeck-${B}_back`)).toBe(BLOCKS[2]);
    expect(records()).toEqual([`${A}/default=${BLOCKS[0]}`, `${B}/back=${BLOCKS[2]}`, `${B}/default=${BLOCKS[1]}`]);
  });

  it("leaves a network the compose file addresses itself as written", async () => {
    const own = await deploy(
      OWN,
      web(`networks:
  default:
    ipam:
      config: [{subnet: 10.214.78.0/28}]
`),
    );
    expect(own.last_deploy.status).toBe("succeeded");
    expect(await subnetOf(`sundeck-${OWN}_default`)).toBe("10.214.78.0/28");
    expect(records().some((r) => r.startsWith(`${OWN}/`))).toBe(false);
  });

  it("leaves a network that exists already (an app from before the pool) with the subnet it has", async () => {
    await dockerOk(
      "network",
      "create",
      "--label",
      `com.docker.compose.project=sundeck-${OLD}`,
      "--label",
      "com.docker.compose.network=default",
      `sundeck-${OLD}_default`,
    );
    const before = await subnetOf(`sundeck-${OLD}_default`);
    expect((await deploy(OLD, web())).last_deploy.status).toBe("succeeded");
    expect(await subnetOf(`sundeck-${OLD}_default`)).toBe(before);
    expect(records().some((r) => r.startsWith(`${OLD}/`))).toBe(false);
  });

  it("names the same subnets after a restart of the server, for a redeploy and a restart of the app", async () => {
    const { data_dir, apps_dir } = s.ctx.config;
    await s.stop();
    s = await startDockerServer({ data_dir, apps_dir, docker: { subnet_pool: POOL, subnet_prefix: 28 } });
    expect(records()).toHaveLength(3);
    const r = await s.root.post(`/api/apps/${B}/restart`, {});
    expect(r.status).toBe(202);
    const id = r.json.deploy_id;
    const restarted = await waitApp(s.root, B, (a) => a.last_deploy?.id === id && a.last_deploy.status !== "running");
    expect(restarted.last_deploy.status).toBe("succeeded");
    expect((await deploy(B, BACKED.replace("stop_grace_period: 1s", "stop_grace_period: 2s"))).last_deploy.status).toBe(
      "succeeded",
    );
    expect(await subnetOf(`sundeck-${B}_default`)).toBe(BLOCKS[1]);
    expect(await subnetOf(`sundeck-${B}_back`)).toBe(BLOCKS[2]);
  });

  it("skips a block another network took, and fails a deploy in words when none is free", async () => {
    expect((await s.root.del(`/api/apps/${B}`)).status).toBe(202);
    await until(async () => (await s.root.get(`/api/apps/${B}`)).status === 404, { timeout: 30_000, what: "B to go" });
    expect(records()).toEqual([`${A}/default=${BLOCKS[0]}`]);
    // blocks 1 and 2 are free again; a network made by hand takes block 2
    await dockerOk("network", "create", "--subnet", BLOCKS[2], SQUATTER);
    const c = await deploy(C, web());
    expect(c.last_deploy.status).toBe("succeeded");
    expect(await subnetOf(`sundeck-${C}_default`)).toBe(BLOCKS[1]);
    const d = await deploy(D, web("    networks: [default, back]\nnetworks:\n  back: {}\n"));
    // default takes block 3, back finds nothing: nothing was started
    expect(d.last_deploy.status).toBe("failed");
    expect(d.last_error).toContain("no free /28 block is left in docker.subnet_pool 10.214.77.0/26 for network back of pool-d");
    expect(d.last_error).toContain("set a larger docker.subnet_pool");
    expect((await docker("network", "inspect", `sundeck-${D}_default`)).code).not.toBe(0);
  });
});
