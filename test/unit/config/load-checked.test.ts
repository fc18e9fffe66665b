/**
 * Proves the start's fast config read stays strict: a file is read with the native parser only when the strict one
 * accepted that very text before (remembered in the data dir), so an edit that adds a duplicate key is still refused,
 * and a text the two parsers read differently is never remembered.
 */
import { describe, expect, it } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CONFIG_CHECKED_FILE, loadConfig } from "../../../src/config/load";
import { ConfigError } from "../../../src/config/schema";
import { tempDir } from "../../helpers/tmp";

const SECRET = "0123456789abcdef0123456789abcdef";

/** A config file naming an existing data dir. */
function setup(extra = "") {
  const dir = tempDir();
  const dataDir = join(dir, "data");
  mkdirSync(dataDir);
  const path = join(dir, "config.yaml");
  const base = `master_secret: ${SECRET}\ndata_dir: ${dataDir}\ntls:\n  mode: "off"\n`;
  writeFileSync(path, base + extra);
  const load = () => loadConfig({ path, env: {}, cwd: dir });
  return { path, dataDir, base, load, marker: join(dataDir, CONFIG_CHECKED_FILE) };
}

describe("the checked config text", () => {
  it("is remembered once the strict parser accepted it, and the next load gives the same configuration", () => {
    const s = setup('listen_addr: ":9443"\n');
    const first = s.load().config;
    expect(existsSync(s.marker)).toBe(true);
    const again = s.load().config;
    expect(again).toEqual(first);
    expect(again.listen_addr).toBe(":9443");
    expect(Object.isFrozen(again)).toBe(true);
  });

  it("does not cover an edited file: a duplicate key added later is refused", () => {
    const s = setup('listen_addr: ":9443"\n');
    s.load();
    const remembered = readFileSync(s.marker, "utf8");
    writeFileSync(s.path, `${s.base}listen_addr: ":1"\nlisten_addr: ":2"\n`);
    expect(() => s.load()).toThrow(ConfigError);
    expect(() => s.load()).toThrow("invalid YAML");
    expect(readFileSync(s.marker, "utf8")).toBe(remembered);
  });

  it("is not remembered when the native parser reads the text differently", () => {
    // a YAML 1.1 merge key: the native parser merges it (a valid rate limit), the strict one (YAML 1.2) keeps `<<`
    // as a key, which is refused; the strict reading must keep winning
    const s = setup("ratelimit:\n  <<: { requests: 5 }\n");
    expect(() => s.load()).toThrow("ratelimit.<<: unknown key");
    expect(existsSync(s.marker)).toBe(false);
    expect(() => s.load()).toThrow("ratelimit.<<: unknown key");
  });
});
