/** The git sync limits: the config's defaults are the repository layer's, and the config checks them. */
import { describe, expect, it } from "bun:test";
import { defaults, validateConfig } from "../../../../src/config/schema";
import { limitsOf } from "../../../../src/modules/gitsync/config";
import { DEFAULT_LIMITS } from "../../../../src/modules/gitsync/repo/limits";

const withGit = (over: Record<string, unknown>) => ({
  ...defaults(),
  master_secret: "x".repeat(32),
  tls: { ...defaults().tls, mode: "off" },
  git_sync: { ...defaults().git_sync, ...over },
});

describe("git sync limits", () => {
  it("default to what the repository layer assumes", () => {
    expect(limitsOf(defaults().git_sync)).toEqual(DEFAULT_LIMITS);
  });

  it("are checked where they are set, naming the key", () => {
    expect(() => validateConfig(withGit({ max_file_bytes: 10 }))).toThrow(
      "git_sync.max_file_bytes: must be a whole number from 1024",
    );
    expect(() => validateConfig(withGit({ cycle_timeout: "2s" }))).toThrow("git_sync.cycle_timeout: must be at least 10s");
    expect(() => validateConfig(withGit({ max_pack_bytes: 8 * 1024 * 1024, cycle_timeout: "5m" }))).not.toThrow();
  });
});
