/** The Backups tab's pure side (dashboard/backups.ts): cron in words, the config form to its body, durations, targets. */
import { describe, expect, test } from "bun:test";
import {
  anyRunning,
  BACKUP_SECRET_MASK,
  configForm,
  configInput,
  cronHint,
  runDuration,
  shortSha,
  targetSummary,
} from "../../../src/dashboard/backups";
import type { BackupConfig } from "../../../src/shared/backups";

const stored = (over: Partial<BackupConfig> = {}): BackupConfig => ({
  id: 4,
  app_slug: "shop",
  strategy: "postgres",
  service: "db",
  target: {
    kind: "s3",
    endpoint: "https://s3.example.com",
    bucket: "backups",
    prefix: "shop/",
    region: "eu-west-1",
    access_key: "AK",
    secret_key: "********",
    path_style: true,
  },
  schedule: "30 2 * * *",
  timezone: "Europe/Paris",
  retention_count: 10,
  retention_days: null,
  pre_hooks: ["echo before"],
  post_hooks: [],
  enabled: true,
  next_run_at: null,
  created_at: "2026-11-27T00:00:00Z",
  updated_at: "2026-11-27T00:00:00Z",
  ...over,
});

describe("cronHint", () => {
  test("says the common shapes in words", () => {
    expect(cronHint("0 3 * * *")).toBe("Every day at 03:00");
    expect(cronHint("*/15 * * * *")).toBe("Every 15 minutes");
    expect(cronHint("5 * * * *")).toBe("Every hour at :05");
    expect(cronHint("0 */6 * * *")).toBe("Every 6 hours at :00");
    expect(cronHint("30 4 * * 0")).toBe("Every Sunday at 04:30");
    expect(cronHint("30 4 * * 7")).toBe("Every Sunday at 04:30");
    expect(cronHint("0 1 * * 1-5")).toBe("Every weekday at 01:00");
    expect(cronHint("0 0 1 * *")).toBe("On day 1 of every month at 00:00");
    expect(cronHint("* * * * *")).toBe("Every minute");
  });

  test("no schedule means by hand; other shapes get the field order", () => {
    expect(cronHint("")).toBe("No schedule: runs only when started by hand");
    expect(cronHint(null)).toBe("No schedule: runs only when started by hand");
    expect(cronHint("0 3 * *")).toBe("Five fields: minute hour day-of-month month day-of-week");
    expect(cronHint("0 3 1,15 * *")).toStartWith("Custom schedule");
    expect(cronHint("0 0 3 * * *")).toBe("Every day at 03:00");
  });
});

describe("configInput", () => {
  test("a new local config: trimmed, blank numbers are null, hooks one per line", () => {
    const f = {
      ...configForm(null, { service: "data", strategy: "volume" }),
      pre_hooks: " sync \n\n echo ok",
      retention_days: "",
    };
    expect(configInput(f, null)).toEqual({
      strategy: "volume",
      service: "data",
      target: { kind: "local" },
      schedule: "0 3 * * *",
      timezone: null,
      retention_count: 7,
      retention_days: null,
      pre_hooks: ["sync", "echo ok"],
      post_hooks: [],
      enabled: true,
    });
  });

  test("editing an S3 config with the secret left blank sends the mask, which keeps it", () => {
    const c = stored();
    const f = configForm(c);
    expect(f.secret_key).toBe("");
    const body = configInput(f, c);
    expect(body.target as unknown).toEqual({ ...(c.target as object), secret_key: BACKUP_SECRET_MASK });
    expect(body.schedule).toBe("30 2 * * *");
    expect(body.timezone).toBe("Europe/Paris");
    expect(body.pre_hooks).toEqual(["echo before"]);
  });

  test("a typed secret is sent; without a stored one a blank stays blank", () => {
    const c = stored();
    expect(configInput({ ...configForm(c), secret_key: "new" }, c).target).toMatchObject({ secret_key: "new" });
    const none = stored({ target: { ...(c.target as any), secret_key: "" } });
    expect(configInput(configForm(none), none).target).toMatchObject({ secret_key: "" });
  });

  test("an empty schedule runs by hand only; a bad count is refused with its field's name", () => {
    const f = { ...configForm(null), service: "db", schedule: "  " };
    expect(configInput(f, null).schedule).toBeNull();
    expect(() => configInput({ ...f, retention_count: "0" }, null)).toThrow("Keep the last must be a whole number");
    expect(() => configInput({ ...f, retention_days: "1.5" }, null)).toThrow("Keep for days");
  });
});

describe("display helpers", () => {
  test("durations of finished and running work", () => {
    expect(runDuration({ started_at: "2026-01-01T00:00:00Z", finished_at: "2026-01-01T00:00:12.340Z" })).toBe("12.3 s");
    expect(runDuration({ started_at: "2026-01-01T00:00:00Z", finished_at: "2026-01-01T00:04:05Z" })).toBe("4 min 5 s");
    expect(runDuration({ started_at: "2026-01-01T00:00:00Z", finished_at: null }, Date.parse("2026-01-01T02:03:00Z"))).toBe(
      "2 h 3 min",
    );
    expect(runDuration({ started_at: "nonsense", finished_at: null })).toBe("");
  });

  test("short digests, targets, and whether anything runs", () => {
    expect(shortSha("a".repeat(64))).toBe("aaaaaaaaaaaa");
    expect(shortSha(null)).toBe("");
    expect(targetSummary({ kind: "local" })).toBe("local disk");
    expect(targetSummary(stored().target)).toBe("S3 backups/shop at s3.example.com");
    expect(anyRunning([{ status: "succeeded" }, { status: "running" }])).toBe(true);
    expect(anyRunning(undefined)).toBe(false);
  });
});
