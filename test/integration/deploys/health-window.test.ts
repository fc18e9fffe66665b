/**
 * A healthcheck that declares a slow start stretches the deploy's wait to Docker's verdict: with a 3 s stabilisation
 * window, a service that gets healthy after 6 s deploys when its healthcheck has `start_period: 10s`; the same
 * service without it fails on Docker's verdict (unhealthy after 3 failed checks), not on Sundeck's timer.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { startDockerServer } from "../../helpers/apps";
import { removeProject } from "../../helpers/docker";
import { until } from "../../helpers/http";
import type { TestServer } from "../../helpers/server";

const SLOW = "itest-hw-slow";
const PLAIN = "itest-hw-plain";
let s: TestServer;

const compose = (startPeriod: string | null) => `services:
  app:
    image: sundeck-test/busybox:latest
    command: ["sh", "-c", "sleep 6; touch /tmp/ready; exec sleep 3600"]
    stop_grace_period: 1s
    healthcheck:
      test: ["CMD", "test", "-f", "/tmp/ready"]
      interval: 1s
      timeout: 1s
      retries: 3
${startPeriod ? `      start_period: ${startPeriod}\n` : ""}`;

const deployed = async (slug: string, text: string) => {
  const r = await s.root.post("/api/apps/deploy", { slug, compose: text, auto_rollback: false });
  expect(r.status).toBe(202);
  const id = r.json.deploy_id as number;
  return until(
    async () => {
      const d = (await s.root.get(`/api/apps/${slug}/deploys/${id}`)).json;
      return d?.status && d.status !== "running" ? d : null;
    },
    { timeout: 60_000, what: `deploy of ${slug} to end` },
  );
};

beforeAll(async () => {
  for (const slug of [SLOW, PLAIN]) await removeProject(`sundeck-${slug}`, { volumes: true });
  s = await startDockerServer({}, { stabilizeMs: 3_000 });
}, 60_000);

afterAll(async () => {
  await s?.stop();
  for (const slug of [SLOW, PLAIN]) await removeProject(`sundeck-${slug}`, { volumes: true });
}, 60_000);

describe("the deploy window and healthchecks", () => {
  it("waits out a declared start period past the stabilisation window", async () => {
    const d = await deployed(SLOW, compose("10s"));
    expect(d.error ?? null).toBeNull();
    expect(d.status).toBe("succeeded");
    // the status board follows Docker's events a moment later
    await until(async () => (await s.root.get(`/api/apps/${SLOW}`)).json.services[0].containers[0].health === "healthy", {
      timeout: 10_000,
      what: "the app view to show it healthy",
    });
  }, 60_000);

  it("fails on Docker's verdict when the healthcheck declares no start period", async () => {
    const t0 = Date.now();
    const d = await deployed(PLAIN, compose(null));
    expect(d.status).toBe("failed");
    expect(d.error).toContain("service app is unhealthy");
    expect(Date.now() - t0).toBeLessThan(14_000);
  }, 60_000);
});
