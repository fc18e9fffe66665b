/**
 * The wait for healthchecks: the stabilisation window unless a service's healthcheck gives Docker's verdict later
 * (start_period + interval x retries + timeout, Docker's defaults for what is left out), then that plus 10 s, at most
 * 15 minutes; services without a check, with it switched off, or not among those waited for change nothing.
 */
import { describe, expect, it } from "bun:test";
import { HEALTH_WINDOW_CAP_MS, healthVerdictMs, healthWindow } from "../../../src/compose/health-window";
import type { ComposeProject } from "../../../src/compose/model";

const project = (services: Record<string, unknown>) => ({ doc: { services }, services: [] }) as unknown as ComposeProject;
const check = (hc: Record<string, unknown>) => ({ image: "x", healthcheck: { test: ["CMD", "true"], ...hc } });

describe("healthVerdictMs", () => {
  it("adds the start period, every retry's interval and one timeout", () => {
    expect(healthVerdictMs(check({ interval: "30s", timeout: "10s", retries: 5, start_period: "5m" }))).toBe(
      300_000 + 150_000 + 10_000,
    );
    expect(healthVerdictMs(check({ interval: "1m30s", timeout: "500ms", retries: 2 }))).toBe(180_500);
  });

  it("uses Docker's defaults for fields left out or 0 (interval 30s, timeout 30s, retries 3, no start period)", () => {
    expect(healthVerdictMs(check({}))).toBe(120_000);
    expect(healthVerdictMs(check({ interval: "0s", retries: 0 }))).toBe(120_000);
  });

  it("is null without a healthcheck or with one switched off", () => {
    expect(healthVerdictMs({ image: "x" })).toBeNull();
    expect(healthVerdictMs(check({ disable: true }))).toBeNull();
    expect(healthVerdictMs({ image: "x", healthcheck: { test: ["NONE"] } })).toBeNull();
  });
});

describe("healthWindow", () => {
  const p = project({
    app: check({ interval: "30s", timeout: "10s", retries: 5, start_period: "5m" }),
    db: check({ interval: "10s", timeout: "5s", retries: 5 }),
    worker: { image: "x" },
  });

  it("stretches the window to the slowest declared start, naming its service", () => {
    expect(healthWindow(p, 60_000)).toEqual({ ms: 470_000, slowest: "app" });
  });

  it("never shortens it, and leaves out services not waited for", () => {
    expect(healthWindow(p, 60_000, ["db", "worker"])).toEqual({ ms: 65_000, slowest: "db" });
    expect(healthWindow(p, 600_000)).toEqual({ ms: 600_000, slowest: null });
    expect(healthWindow(p, 60_000, ["worker"])).toEqual({ ms: 60_000, slowest: null });
  });

  it("is capped at 15 minutes", () => {
    const slow = project({ app: check({ start_period: "2h" }) });
    expect(healthWindow(slow, 60_000).ms).toBe(HEALTH_WINDOW_CAP_MS);
  });
});
