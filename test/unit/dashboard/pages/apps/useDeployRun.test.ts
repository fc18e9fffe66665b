/** A deploy's outcome as the deploy console reads it (pages/apps/useDeployRun.ts): the done frame and a rollback. */
import { describe, expect, test } from "bun:test";
import { resultFromSummary, rollbackVersion } from "../../../../../src/dashboard/pages/apps/useDeployRun";

describe("deploy outcome from the done frame", () => {
  test.each([
    ["deployed version 3", "succeeded", null],
    ["done", "succeeded", null],
    ["removed", "succeeded", null],
    ["deploy failed: image not found", "failed", "image not found"],
    ["failed: cancelled", "cancelled", "cancelled"],
    ["", "unknown", null],
  ])("%p", (summary, status, error) => {
    expect(resultFromSummary(summary)).toEqual({ status: status as any, error, rolledBack: null });
  });
  test("finds the version an automatic rollback went back to", () => {
    const line = (output: string) => ({ n: 1, timestamp: "", action: "up", output });
    expect(rollbackVersion([line("deploy failed: x"), line("rolling back to version 4"), line("done")])).toBe(4);
    expect(rollbackVersion([line("deployed version 2")])).toBeNull();
  });
});
