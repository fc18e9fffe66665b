/** `sundeck backup`'s pure side: sizes, durations, a run's outcome line, the file name a download proposes. */
import { describe, expect, test } from "bun:test";
import { runLine, sizeText, tookText, untilText } from "../../../src/cli/backup";
import { fileNameOf } from "../../../src/cli/backup-transfer";
import type { BackupRun } from "../../../src/shared/backups";

const run = (over: Partial<BackupRun>): BackupRun => ({
  id: 42,
  config_id: 3,
  strategy: "postgres",
  service: "db",
  status: "succeeded",
  trigger: "manual",
  size_bytes: 13_002_342,
  sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
  progress_bytes: null,
  target_kind: "local",
  started_at: "2026-11-27T03:00:00.000Z",
  finished_at: "2026-11-27T03:00:03.100Z",
  error: null,
  ...over,
});

describe("backup output", () => {
  test("sizes in binary units, durations in seconds then minutes", () => {
    expect(sizeText(512)).toBe("512 B");
    expect(sizeText(3 * 2 ** 20)).toBe("3.0 MiB");
    expect(sizeText(null)).toBe("");
    expect(tookText("2026-01-01T00:00:00Z", "2026-01-01T00:00:03.1Z")).toBe("3.1s");
    expect(tookText("2026-01-01T00:00:00Z", "2026-01-01T00:02:05Z")).toBe("2m5s");
    expect(tookText("2026-01-01T00:00:00Z", null, Date.parse("2026-01-01T00:00:01Z"))).toBe("1.0s");
  });

  test("the next run as a wait", () => {
    const now = Date.parse("2026-11-27T03:00:00Z");
    expect(untilText("2026-11-27T03:00:30Z", now)).toBe("in 30s");
    expect(untilText("2026-11-27T03:45:00Z", now)).toBe("in 45m");
    expect(untilText("2026-11-27T05:30:00Z", now)).toBe("in 2h30m");
    expect(untilText("2026-11-28T04:00:00Z", now)).toBe("in 1d");
    expect(untilText("2026-11-27T02:00:00Z", now)).toBe("due");
    expect(untilText(null, now)).toBe("-");
  });

  test("a run in one line: succeeded, running, failed", () => {
    expect(runLine(run({}))).toBe("run 42 (db postgres) succeeded: 12.4 MiB in 3.1s, sha256 9f86d081884c");
    expect(runLine(run({ status: "running", finished_at: null, progress_bytes: 2048 }), Date.parse("2026-11-27T03:00:02Z"))).toBe(
      "run 42 (db postgres) running: 2.0 KiB written, 2.0s",
    );
    expect(runLine(run({ status: "failed", error: "pg_dump: connection refused", service: null, strategy: "state" }))).toBe(
      "run 42 (sundeck state) failed after 3.1s: pg_dump: connection refused",
    );
  });

  test("a download's file name comes from content-disposition, never as a path", () => {
    const res = (cd?: string) => new Response(null, cd ? { headers: { "content-disposition": cd } } : {});
    expect(fileNameOf(res('attachment; filename="postgres-20261127-r42.pgdump.gz"'), "x")).toBe(
      "postgres-20261127-r42.pgdump.gz",
    );
    expect(fileNameOf(res('attachment; filename="../../etc/passwd"'), "x")).toBe("passwd");
    expect(fileNameOf(res('attachment; filename=".."'), "backup-42.gz")).toBe("backup-42.gz");
    expect(fileNameOf(res(), "backup-42.gz")).toBe("backup-42.gz");
  });
});
