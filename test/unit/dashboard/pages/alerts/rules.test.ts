/** The Alerts page's rules (pages/alerts/rules.ts): the spec's examples, conditions in words, the form's body. */
import { describe, expect, test } from "bun:test";
import {
  bodyOf,
  conditionWords,
  draftOf,
  EXAMPLE_RULES,
  exampleBody,
  FOREVER,
  isSilenced,
  SILENCE_CHOICES,
} from "../../../../../src/dashboard/pages/alerts/rules";
import { testWords } from "../../../../../src/dashboard/pages/webhooks/TestResult";

describe("alert rules in the dashboard", () => {
  test("the spec's five examples, one body each", () => {
    expect(EXAMPLE_RULES.map((e) => conditionWords(e.rule))).toEqual([
      "CPU above 80% for 5m",
      "Memory above 85% for 5m",
      "Host disk free under 15%",
      "App down for 5m",
      "Backup failed",
    ]);
    const cpu = exampleBody(EXAMPLE_RULES[0], null, [3]);
    expect(cpu).toEqual({
      name: "CPU above 80%",
      kind: "cpu",
      threshold: 80,
      duration: "5m",
      app_slug: null,
      webhook_ids: [3],
      enabled: true,
    });
    expect(exampleBody(EXAMPLE_RULES[3], "blog", []).app_slug).toBe("blog");
    expect(exampleBody(EXAMPLE_RULES[3], "blog", []).name).toBe("App down (blog)");
    // the host disk rule watches the host whatever app is picked
    expect(exampleBody(EXAMPLE_RULES[2], "blog", []).app_slug).toBeNull();
  });

  test("the form's body: unused thresholds are 0, immediate kinds 0s, a non-number is refused before sending", () => {
    const d = { ...draftOf(), name: " busy ", app: "blog", threshold: "90", duration: "10m", repeat: " 1h " };
    expect(bodyOf(d)).toEqual({
      body: {
        name: "busy",
        app_slug: "blog",
        kind: "cpu",
        threshold: 90,
        duration: "10m",
        repeat_interval: "1h",
        webhook_ids: [],
        enabled: true,
      },
    });
    const backup = bodyOf({ ...d, kind: "backup_failed", threshold: "", duration: "5m" });
    expect("body" in backup && backup.body).toMatchObject({ threshold: 0, duration: "0s" });
    const disk = bodyOf({ ...d, kind: "disk", threshold: "15" });
    expect("body" in disk && disk.body.app_slug).toBeNull();
    expect(bodyOf({ ...d, threshold: "" })).toEqual({ error: "threshold must be a number" });
    expect(bodyOf({ ...d, repeat: "" })).toMatchObject({ body: { repeat_interval: null } });
  });

  test("silence choices end when they say; until lifted is a far-off time", () => {
    const now = Date.parse("2026-05-01T12:00:00Z");
    expect(SILENCE_CHOICES.map((c) => c.until(now))).toEqual(["2026-05-01T13:00:00.000Z", "2026-05-02T12:00:00.000Z", FOREVER]);
    expect(isSilenced({ silenced_until: FOREVER }, now)).toBe(true);
    expect(isSilenced({ silenced_until: "2026-05-01T11:00:00.000Z" }, now)).toBe(false);
    expect(isSilenced({ silenced_until: null }, now)).toBe(false);
  });

  test("a webhook test result in one line", () => {
    expect(testWords({ ok: true, status: 204, error: "" })).toBe("Test delivered: status 204");
    expect(testWords({ ok: false, status: 0, error: "refused: 10.0.0.1 is private" })).toBe(
      "Test failed: no response · refused: 10.0.0.1 is private",
    );
  });
});
