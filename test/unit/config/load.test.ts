/** Loading the configuration: which file, defaults < file < SUNDECK_* env < flags, and its errors. */
import { describe, expect, it } from "bun:test";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { configPath, DEFAULT_CONFIG_PATH, loadConfig } from "../../../src/config/load";
import { ConfigError, effectiveHttpListenAddr } from "../../../src/config/schema";
import { tempDir } from "../../helpers/tmp";

const SECRET = "0123456789abcdef0123456789abcdef";
const MINIMAL = `master_secret: ${SECRET}\ntls:\n  email: ops@example.com\n`;

/** A config file with `yaml` in a fresh directory; returns its path and directory. */
function configFile(yaml: string): { path: string; dir: string } {
  const dir = tempDir();
  const path = join(dir, "config.yaml");
  writeFileSync(path, yaml);
  return { path, dir };
}

/** The ConfigError thrown by `fn`; fails the test when it does not throw one. */
function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    expect((e as Error).message).not.toContain("\n");
    expect((e as Error).message.startsWith("config: ")).toBe(true);
    return e as ConfigError;
  }
  throw new Error("expected a ConfigError, none was thrown");
}

function loadYaml(yaml: string, env: Record<string, string | undefined> = {}) {
  const { path, dir } = configFile(yaml);
  return loadConfig({ path, env, cwd: dir });
}

describe("configPath", () => {
  it("prefers --config, then SUNDECK_CONFIG, then the default path", () => {
    expect(configPath({ path: "/a.yaml", env: { SUNDECK_CONFIG: "/b.yaml" } })).toEqual({ path: "/a.yaml", explicit: true });
    expect(configPath({ env: { SUNDECK_CONFIG: "/b.yaml" } })).toEqual({ path: "/b.yaml", explicit: true });
    expect(configPath({ env: {} })).toEqual({ path: "/etc/sundeck/config.yaml", explicit: false });
    expect(DEFAULT_CONFIG_PATH).toBe("/etc/sundeck/config.yaml");
  });
});

describe("loadConfig from a file", () => {
  it("fills everything the file leaves out with the SPEC defaults", () => {
    const { path, dir } = configFile(MINIMAL);
    const { config, source } = loadConfig({ path, env: {}, cwd: dir });
    expect(source).toBe(path);
    expect(config.master_secret).toBe(SECRET);
    expect(config.data_dir).toBe("/var/lib/sundeck");
    expect(config.apps_dir).toBe("/etc/sundeck/apps");
    expect(config.listen_addr).toBe(":443");
    expect(config.management_port).toBe(8443);
    expect(config.management_addr).toBe("127.0.0.1");
    expect(config.tls).toEqual({ mode: "auto", email: "ops@example.com", acme_directory: "", acme_ca_file: "" });
    expect(config.audit_retention_days).toBe(365);
    expect(config.ratelimit).toEqual({ requests: 200, window: "60s", burst: 50, by: "ip" });
    expect(config.metrics.tiers.map((t) => t.name)).toEqual(["raw", "1m", "5m", "1h"]);
    expect(config.git_sync.enabled).toBe(false);
    expect(config.git_sync.branch).toBe("main");
    expect(effectiveHttpListenAddr(config)).toBe(":80");
  });

  it("overrides defaults with file values and keeps defaults of sibling keys", () => {
    const { config } = loadYaml(`${MINIMAL}listen_addr: ":8443"\nratelimit:\n  burst: 10\nmanagement_port: 9000\n`);
    expect(config.listen_addr).toBe(":8443");
    expect(config.management_port).toBe(9000);
    expect(config.ratelimit).toEqual({ requests: 200, window: "60s", burst: 10, by: "ip" });
  });

  it("replaces lists rather than merging them", () => {
    const { config } = loadYaml(`${MINIMAL}metrics:\n  tiers:\n    - { name: raw, resolution: 30s, retention: 2d }\n`);
    expect(config.metrics.tiers).toEqual([{ name: "raw", resolution: "30s", retention: "2d" }]);
  });

  it("treats a null value as the default", () => {
    const { config } = loadYaml(`${MINIMAL}listen_addr:\nratelimit: ~\n`);
    expect(config.listen_addr).toBe(":443");
    expect(config.ratelimit.requests).toBe(200);
  });

  it("disables the plain HTTP listener with an empty http_listen_addr", () => {
    const { config } = loadYaml(`${MINIMAL}http_listen_addr: ""\n`);
    expect(effectiveHttpListenAddr(config)).toBe("");
  });

  it("resolves relative data_dir and apps_dir against the working directory", () => {
    const { path, dir } = configFile(`${MINIMAL}data_dir: ./data\napps_dir: apps\n`);
    const { config } = loadConfig({ path, env: {}, cwd: dir });
    expect(config.data_dir).toBe(join(dir, "data"));
    expect(config.apps_dir).toBe(join(dir, "apps"));
  });

  it("reads a relative --config path against the working directory", () => {
    const { dir } = configFile(MINIMAL);
    const { config } = loadConfig({ path: "config.yaml", env: {}, cwd: dir });
    expect(config.master_secret).toBe(SECRET);
  });

  it("returns a frozen configuration", () => {
    const { config } = loadYaml(MINIMAL);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.tls)).toBe(true);
    expect(Object.isFrozen(config.metrics.tiers[0])).toBe(true);
    expect(() => {
      (config as any).listen_addr = ":1";
    }).toThrow();
  });

  it("reads the file named by SUNDECK_CONFIG", () => {
    const { path, dir } = configFile(`${MINIMAL}listen_addr: ":9443"\n`);
    expect(loadConfig({ env: { SUNDECK_CONFIG: path }, cwd: dir }).config.listen_addr).toBe(":9443");
  });

  it("refuses a --config file that does not exist", () => {
    const missing = join(tempDir(), "nope.yaml");
    const err = configError(() => loadConfig({ path: missing, env: {}, cwd: tempDir() }));
    expect(err.message).toContain("not found");
    expect(err.message).toContain(missing);
  });

  it("refuses a SUNDECK_CONFIG file that does not exist instead of running the embedded default", () => {
    const dir = tempDir();
    const err = configError(() => loadConfig({ env: { SUNDECK_CONFIG: join(dir, "nope.yaml") }, cwd: dir }));
    expect(err.message).toContain("not found");
    expect(existsSync(join(dir, "sundeck-data"))).toBe(false);
  });

  it("refuses invalid YAML in one line", () => {
    const err = configError(() => loadYaml("listen_addr: [unclosed\n  management_port: 1\n"));
    expect(err.message).toContain("invalid YAML");
  });

  it("refuses duplicate keys", () => {
    const err = configError(() => loadYaml(`${MINIMAL}listen_addr: ":1"\nlisten_addr: ":2"\n`));
    expect(err.message).toContain("invalid YAML");
  });

  it.each([
    ["a list", "- a\n- b\n"],
    ["a string", "just text\n"],
    ["a number", "42\n"],
  ])("refuses a file that is %s rather than a mapping", (_what, yaml) => {
    const err = configError(() => loadYaml(yaml));
    expect(err.message).toContain("mapping");
  });

  it("refuses an empty file for lack of a master_secret, without generating one", () => {
    const { path, dir } = configFile("");
    const err = configError(() => loadConfig({ path, env: {}, cwd: dir }));
    expect(err.key).toBe("master_secret");
    expect(existsSync(join(dir, "sundeck-data"))).toBe(false);
  });

  it("refuses a master_secret shorter than 16 characters", () => {
    const err = configError(() => loadYaml("master_secret: short\ntls:\n  email: a@b.co\n"));
    expect(err.key).toBe("master_secret");
  });

  it("refuses tls mode auto without an email", () => {
    const err = configError(() => loadYaml(`master_secret: ${SECRET}\n`));
    expect(err.message).toStartWith("config: tls.email: ");
  });

  it("refuses an unknown key, naming it", () => {
    const err = configError(() => loadYaml(`${MINIMAL}listen_adr: ":443"\n`));
    expect(err.message).toBe("config: listen_adr: unknown key");
  });

  it("refuses an unknown nested key, naming its full path", () => {
    const err = configError(() => loadYaml(`${MINIMAL}ratelimit:\n  rps: 5\n`));
    expect(err.message).toBe("config: ratelimit.rps: unknown key");
  });

  it("refuses a scalar where a mapping belongs", () => {
    const err = configError(() => loadYaml(`${MINIMAL}ratelimit: 200\n`));
    expect(err.message).toStartWith("config: ratelimit: ");
  });

  it("refuses a value of the wrong type, naming the key", () => {
    expect(configError(() => loadYaml(`${MINIMAL}management_port: "8443"\n`)).key).toBe("management_port");
    expect(configError(() => loadYaml(`${MINIMAL}registries: ghcr\n`)).key).toBe("registries");
    expect(configError(() => loadYaml(`${MINIMAL}git_sync:\n  enabled: "sometimes"\n`)).key).toBe("git_sync.enabled");
  });

  it("refuses a bad tls.mode", () => {
    const yaml = `master_secret: ${SECRET}\ntls:\n  mode: acme\n  email: ops@example.com\n`;
    expect(configError(() => loadYaml(yaml)).message).toStartWith("config: tls.mode: ");
  });

  it("refuses bad listen addresses", () => {
    expect(configError(() => loadYaml(`${MINIMAL}listen_addr: "443"\n`)).key).toBe("listen_addr");
    expect(configError(() => loadYaml(`${MINIMAL}http_listen_addr: ":70000"\n`)).key).toBe("http_listen_addr");
  });

  it("refuses a bad trusted_proxies CIDR", () => {
    const err = configError(() => loadYaml(`${MINIMAL}trusted_proxies: ["10.0.0.0/8", "10.0.0.0/99"]\n`));
    expect(err.message).toStartWith("config: trusted_proxies.1: ");
  });

  it("refuses a git_sync remote that is a local path or file://, naming the key and the accepted forms", () => {
    for (const remote of ["/srv/repo.git", "./x", "file:///srv/repo.git"]) {
      const err = configError(() => loadYaml(`${MINIMAL}git_sync:\n  remote: ${remote}\n`));
      expect(err.message).toBe(
        "config: git_sync.remote: must be an SSH (git@host:path or ssh://host/path), https:// or http:// URL: local paths, file:// and other transports are not supported",
      );
    }
    for (const remote of ["git@git.example.com:ops/apps.git", "ssh://git@host/x.git", "http://10.0.0.5/x.git"])
      expect(loadYaml(`${MINIMAL}git_sync:\n  remote: ${remote}\n`).config.git_sync.remote).toBe(remote);
  });

  it("refuses bad durations", () => {
    expect(configError(() => loadYaml(`${MINIMAL}ratelimit:\n  window: 60\n`)).message).toStartWith("config: ratelimit.window: ");
    expect(configError(() => loadYaml(`${MINIMAL}git_sync:\n  poll_interval: 1x\n`)).key).toBe("git_sync.poll_interval");
  });
});

describe("loadConfig precedence", () => {
  it("lets SUNDECK_* environment variables override the file", () => {
    const { config } = loadYaml(`${MINIMAL}listen_addr: ":8443"\nmanagement_port: 9000\n`, {
      SUNDECK_LISTEN_ADDR: ":10443",
      SUNDECK_MANAGEMENT_PORT: "9100",
      SUNDECK_TLS_MODE: "off",
      SUNDECK_RATELIMIT_BURST: "7",
      SUNDECK_TRUSTED_PROXIES: "10.0.0.0/8, 127.0.0.1",
      SUNDECK_REGISTRIES: "ghcr,quay",
      SUNDECK_GIT_SYNC_ENABLED: "false",
    });
    expect(config.listen_addr).toBe(":10443");
    expect(config.management_port).toBe(9100);
    expect(config.tls.mode).toBe("off");
    expect(config.tls.email).toBe("ops@example.com");
    expect(config.ratelimit.burst).toBe(7);
    expect(config.trusted_proxies).toEqual(["10.0.0.0/8", "127.0.0.1"]);
    expect(config.registries).toEqual(["ghcr", "quay"]);
  });

  it("takes the master secret from SUNDECK_MASTER_SECRET over the file", () => {
    const other = "fedcba9876543210fedcba9876543210";
    expect(loadYaml(MINIMAL, { SUNDECK_MASTER_SECRET: other }).config.master_secret).toBe(other);
  });

  it("reads booleans from the environment", () => {
    const yaml = `${MINIMAL}git_sync:\n  remote: https://git.example.com/ops/apps.git\n`;
    expect(loadYaml(yaml, { SUNDECK_GIT_SYNC_ENABLED: "true" }).config.git_sync.enabled).toBe(true);
    expect(loadYaml(yaml, { SUNDECK_GIT_SYNC_ENABLED: "1" }).config.git_sync.enabled).toBe(true);
    expect(loadYaml(yaml, { SUNDECK_GIT_SYNC_ENABLED: "FALSE" }).config.git_sync.enabled).toBe(false);
  });

  it("lets an empty SUNDECK_HTTP_LISTEN_ADDR disable the plain listener", () => {
    expect(effectiveHttpListenAddr(loadYaml(MINIMAL, { SUNDECK_HTTP_LISTEN_ADDR: "" }).config)).toBe("");
  });

  it("ignores environment variables that are not set", () => {
    expect(loadYaml(MINIMAL, { SUNDECK_LISTEN_ADDR: undefined }).config.listen_addr).toBe(":443");
  });

  it("refuses a non-numeric integer variable, naming the key and the variable", () => {
    const err = configError(() => loadYaml(MINIMAL, { SUNDECK_MANAGEMENT_PORT: "eighty" }));
    expect(err.message).toStartWith("config: management_port: ");
    expect(err.message).toContain("SUNDECK_MANAGEMENT_PORT");
  });

  it("refuses a boolean variable that is not true or false", () => {
    const err = configError(() => loadYaml(MINIMAL, { SUNDECK_GIT_SYNC_ENABLED: "yes please" }));
    expect(err.message).toStartWith("config: git_sync.enabled: ");
  });

  it("validates values coming from the environment", () => {
    expect(configError(() => loadYaml(MINIMAL, { SUNDECK_TLS_MODE: "bogus" })).key).toBe("tls.mode");
    expect(configError(() => loadYaml(MINIMAL, { SUNDECK_TRUSTED_PROXIES: "not-a-cidr" })).key).toBe("trusted_proxies.0");
    expect(configError(() => loadYaml(MINIMAL, { SUNDECK_RATELIMIT_WINDOW: "soon" })).key).toBe("ratelimit.window");
  });

  it("lets flag overrides win over the environment", () => {
    const { path, dir } = configFile(MINIMAL);
    const { config } = loadConfig({
      path,
      env: { SUNDECK_LISTEN_ADDR: ":10443", SUNDECK_DATA_DIR: "/srv/env-data" },
      cwd: dir,
      overrides: { listen_addr: ":11443", data_dir: "flag-data" },
    });
    expect(config.listen_addr).toBe(":11443");
    expect(config.data_dir).toBe(join(dir, "flag-data"));
  });
});

// the embedded default runs only when nothing exists at the default path; never touch a real one
describe.skipIf(existsSync(DEFAULT_CONFIG_PATH))("loadConfig embedded default (no config file)", () => {
  it("runs a local instance under ./sundeck-data with TLS off on :8080", () => {
    const cwd = tempDir();
    const { config, source } = loadConfig({ env: {}, cwd });
    expect(source).toBeNull();
    expect(config.data_dir).toBe(join(cwd, "sundeck-data"));
    expect(config.apps_dir).toBe(join(cwd, "sundeck-data", "apps"));
    expect(config.tls.mode).toBe("off");
    expect(config.listen_addr).toBe(":8080");
    expect(config.management_addr).toBe("127.0.0.1");
    expect(config.management_port).toBe(8443);
    expect(effectiveHttpListenAddr(config)).toBe("");
  });

  it("generates a master secret and persists it with mode 0600 in the data dir", () => {
    const cwd = tempDir();
    const { config } = loadConfig({ env: {}, cwd });
    expect(config.master_secret.length).toBeGreaterThanOrEqual(32);
    const file = join(cwd, "sundeck-data", "master_secret");
    expect(readFileSync(file, "utf8").trim()).toBe(config.master_secret);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(cwd, "sundeck-data")).mode & 0o777).toBe(0o700);
  });

  it("reuses the persisted master secret on the next load", () => {
    const cwd = tempDir();
    const first = loadConfig({ env: {}, cwd }).config.master_secret;
    const second = loadConfig({ env: {}, cwd }).config.master_secret;
    expect(second).toBe(first);
  });

  it("generates a different secret for a different data dir", () => {
    expect(loadConfig({ env: {}, cwd: tempDir() }).config.master_secret).not.toBe(
      loadConfig({ env: {}, cwd: tempDir() }).config.master_secret,
    );
  });

  it("reads a master secret already in the data dir", () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, "sundeck-data"));
    writeFileSync(join(cwd, "sundeck-data", "master_secret"), `${SECRET}\n`, { mode: 0o600 });
    expect(loadConfig({ env: {}, cwd }).config.master_secret).toBe(SECRET);
  });

  it("uses SUNDECK_MASTER_SECRET without writing a secret file", () => {
    const cwd = tempDir();
    expect(loadConfig({ env: { SUNDECK_MASTER_SECRET: SECRET }, cwd }).config.master_secret).toBe(SECRET);
    expect(existsSync(join(cwd, "sundeck-data", "master_secret"))).toBe(false);
  });

  it("keeps the generated secret in SUNDECK_DATA_DIR when set", () => {
    const cwd = tempDir();
    const data = join(tempDir(), "elsewhere");
    const { config } = loadConfig({ env: { SUNDECK_DATA_DIR: data }, cwd });
    expect(config.data_dir).toBe(data);
    expect(readFileSync(join(data, "master_secret"), "utf8").trim()).toBe(config.master_secret);
    expect(existsSync(join(cwd, "sundeck-data"))).toBe(false);
  });

  it("still applies SUNDECK_* variables over the embedded default", () => {
    const { config } = loadConfig({ env: { SUNDECK_LISTEN_ADDR: ":9090", SUNDECK_MANAGEMENT_PORT: "9443" }, cwd: tempDir() });
    expect(config.listen_addr).toBe(":9090");
    expect(config.management_port).toBe(9443);
    expect(config.tls.mode).toBe("off");
  });
});
