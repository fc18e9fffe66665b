/** `sundeck git`'s pure side: the status as text, when a requested sync shows as finished, and its outcome. */
import { describe, expect, test } from "bun:test";
import { CliError } from "../../../src/cli/errors";
import { outcomeOf, settled, statusLines } from "../../../src/cli/git";
import { gitStatus } from "../../helpers/git-status";

const NOW = Date.parse("2026-11-27T06:05:00Z");
const status = gitStatus;

describe("statusLines", () => {
  test("in sync: state, last sync with its age, short commit", () => {
    expect(statusLines(status(), NOW)).toEqual([
      "git sync: in sync",
      "last sync: 5m ago (2026-11-27T06:00:00Z)",
      "last commit: 0123456789ab",
    ]);
  });

  test("behind by N says how to apply; an error and conflicts are listed", () => {
    expect(statusLines(status({ state: "behind", behind_by: 2 }), NOW)).toContain(
      "behind by: 2 (apply them with: sundeck git apply-pending)",
    );
    const lines = statusLines(
      status({ state: "conflict", last_error: "push rejected", conflicts: [{ path: "blog/.env", message: "both changed" }] }),
      NOW,
    );
    expect(lines[0]).toBe("git sync: conflict (local state kept)");
    expect(lines).toContain("last error: push rejected");
    expect(lines).toContain("conflict: blog/.env: both changed");
  });

  test("what the last cycle skipped from the remote is listed, with why", () => {
    const lines = statusLines(status({ skipped: [{ path: "..", reason: "skipped: an unsafe name" }] }), NOW);
    expect(lines).toContain("skipped from the remote: ..: skipped: an unsafe name");
  });

  test("a failed attempt after the last sync is shown with its time", () => {
    const lines = statusLines(
      status({ state: "error", last_error: "cannot reach git.example.com", last_attempt_at: "2026-11-27T06:04:00Z" }),
      NOW,
    );
    expect(lines).toContain("last attempt: 1m ago (2026-11-27T06:04:00Z)");
    expect(statusLines(status({ last_attempt_at: "2026-11-27T06:00:00Z" }), NOW).join("\n")).not.toContain("last attempt");
  });

  test("never synced, no commit; disabled is one line", () => {
    expect(statusLines(status({ last_sync_at: null, last_commit_sha: null }), NOW).slice(1)).toEqual([
      "last sync: never",
      "last commit: none",
    ]);
    expect(statusLines(status({ enabled: false, state: "disabled" }), NOW)).toHaveLength(1);
  });
});

describe("settled", () => {
  const before = status();
  test("a new sync time or a new error ends the wait; a running sync does not", () => {
    expect(settled(before, status())).toBe(false);
    expect(settled(before, status({ last_sync_at: "2026-11-27T06:06:00Z" }))).toBe(true);
    expect(settled(before, status({ last_sync_at: "2026-11-27T06:06:00Z", running: true }))).toBe(false);
    expect(settled(before, status({ state: "error", last_error: "remote unreachable" }))).toBe(true);
    expect(settled(status({ last_error: "x" }), status({ last_error: "x" }))).toBe(false);
    // the same error again: the worker was seen running, and is not any more
    expect(settled(status({ last_error: "x" }), status({ last_error: "x" }), true)).toBe(true);
    expect(settled(before, status({ running: true }), true)).toBe(false);
    // a server that says when each cycle ended: a new attempt time ends the wait, the same error or not
    const failed = status({ state: "error", last_error: "x", last_attempt_at: "2026-11-27T06:01:00.000Z" });
    expect(settled(failed, { ...failed, last_attempt_at: "2026-11-27T06:01:00.500Z" })).toBe(true);
    expect(settled(failed, failed)).toBe(false);
  });
});

describe("outcomeOf", () => {
  test("in sync and behind are done; error and conflict fail with the reason", () => {
    expect(outcomeOf("sync", status())).toBe("sync done: in sync at 0123456789ab");
    expect(outcomeOf("sync", status({ state: "behind", behind_by: 1 }))).toBe("sync done: behind by 1 commit at 0123456789ab");
    expect(() => outcomeOf("sync", status({ state: "error", last_error: "auth failed" }))).toThrow(
      new CliError("sync failed: auth failed"),
    );
    expect(() => outcomeOf("apply", status({ state: "conflict", conflicts: [{ path: "a/.env" }] }))).toThrow(
      "apply: conflict, local state kept: a/.env",
    );
  });
});
