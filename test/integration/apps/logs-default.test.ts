/**
 * The service a container logs stream shows when it names none, on a real engine: web when the app has one, else
 * the first routed service, else one error frame naming the services.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { startDockerServer, waitApp } from "../../helpers/apps";
import { removeProject } from "../../helpers/docker";
import { until } from "../../helpers/http";
import type { TestServer } from "../../helpers/server";
import { openWs } from "../../helpers/ws";

const SLUG = "itest-logdefault";
let s: TestServer;

const talker = (name: string, extra = "") => `  ${name}:
    image: sundeck-test/busybox:latest
    command: ["sh", "-c", "trap 'exit 0' TERM; echo i-am-${name}; while true; do sleep 1; done"]
    stop_grace_period: 1s
${extra}`;

/** worker first, api routed second: the routed one is the default. */
const routed = `services:\n${talker("worker", "    network_mode: none\n")}${talker(
  "api",
  `    expose: ["8080"]\n    labels:\n      sundeck.domain: logdefault.localhost\n`,
)}`;
const unrouted = `services:\n${talker("worker", "    network_mode: none\n")}${talker("cron", "    network_mode: none\n")}`;
const withWeb = `services:\n${talker("worker", "    network_mode: none\n")}${talker("web", "    network_mode: none\n")}`;

/** Deploy `compose` and wait until every service runs. */
async function deploy(compose: string, services: string[]) {
  expect((await s.root.post("/api/apps/deploy", { slug: SLUG, compose })).status).toBe(202);
  await waitApp(
    s.root,
    SLUG,
    (a) =>
      a.status === "running" &&
      a.last_deploy?.status === "succeeded" &&
      services.every((n) => a.services.some((x: any) => x.name === n && x.containers.some((c: any) => c.state === "running"))),
  );
}

/** The frames of a history-only stream without `service`, once a line arrives or an error does. */
async function defaultFrames(): Promise<any[]> {
  return until(
    async () => {
      const ws = await openWs(s.url, `/api/apps/${SLUG}/logs?follow=false`, { cookie: s.root.cookie });
      expect((await ws.waitClose(10_000)).code).toBe(1000);
      return ws.frames.length ? (ws.frames as any[]) : null;
    },
    { timeout: 15_000, what: "the default service's lines" },
  );
}

beforeAll(async () => {
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  s = await startDockerServer();
});
afterAll(async () => {
  await s?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
});

describe("container logs without a service", () => {
  it("show the first routed service of an app without web", async () => {
    await deploy(routed, ["worker", "api"]);
    expect((await defaultFrames()).map((f) => f.line)).toEqual(["i-am-api"]);
  }, 90_000);

  it("send one error frame naming the services when none is web, single or routed", async () => {
    await deploy(unrouted, ["worker", "cron"]);
    const ws = await openWs(s.url, `/api/apps/${SLUG}/logs`, { cookie: s.root.cookie });
    expect(await ws.waitClose(10_000)).toEqual({ code: 1000, reason: "" });
    expect(ws.frames).toEqual([
      { error: `not found: no default service for ${SLUG} (no web, several services, none routed); choose one of: worker, cron` },
    ]);
  }, 90_000);

  it("keep web as the default when the app has one", async () => {
    await deploy(withWeb, ["worker", "web"]);
    expect((await defaultFrames()).map((f) => f.line)).toEqual(["i-am-web"]);
  }, 90_000);
});
