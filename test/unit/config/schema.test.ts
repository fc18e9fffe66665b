/** The configuration schema: the SPEC defaults, and one line naming the key for every invalid value. */
import { describe, expect, it } from "bun:test";
import { type Config, ConfigError, defaults, effectiveHttpListenAddr, validateConfig } from "../../../src/config/schema";

const SECRET = "0123456789abcdef0123456789abcdef";

/** Defaults plus the two values they lack for auto TLS, so they validate. */
function valid(): Config {
  const c = defaults();
  c.master_secret = SECRET;
  c.tls.email = "ops@example.com";
  return c;
}

/** The ConfigError raised for a config changed by `change`; fails the test when none is raised. */
function errorFor(change: (c: any) => void): ConfigError {
  const c: any = valid();
  change(c);
  try {
    validateConfig(c);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error("expected a ConfigError, none was thrown");
}

function expectRejected(change: (c: any) => void, key: string): ConfigError {
  const err = errorFor(change);
  expect(err.key).toBe(key);
  expect(err.message.startsWith(`config: ${key}: `)).toBe(true);
  expect(err.message).not.toContain("\n");
  return err;
}

describe("defaults", () => {
  const d = defaults();

  it("matches the SPEC table for paths and listeners", () => {
    expect(d.data_dir).toBe("/var/lib/sundeck");
    expect(d.apps_dir).toBe("/etc/sundeck/apps");
    expect(d.listen_addr).toBe(":443");
    expect(d.management_port).toBe(8443);
    expect(d.management_addr).toBe("127.0.0.1");
    expect(d.http_listen_addr).toBeNull();
  });

  it("uses automatic TLS and keeps audit entries 365 days", () => {
    expect(d.tls.mode).toBe("auto");
    expect(d.audit_retention_days).toBe(365);
  });

  it("limits 200 requests per 60s window with burst 50, keyed by ip", () => {
    expect(d.ratelimit).toEqual({ requests: 200, window: "60s", burst: 50, by: "ip" });
  });

  it("has the four metrics tiers of SPEC.md", () => {
    expect(d.metrics.tiers).toEqual([
      { name: "raw", resolution: "10s", retention: "24h" },
      { name: "1m", resolution: "1m", retention: "7d" },
      { name: "5m", resolution: "5m", retention: "30d" },
      { name: "1h", resolution: "1h", retention: "8760h" },
    ]);
  });

  it("has git sync off with the SPEC defaults", () => {
    expect(d.git_sync).toMatchObject({
      enabled: false,
      remote: "",
      branch: "main",
      author_name: "sundeck",
      ssh_key_path: "",
      https_username: "",
      https_token: "",
      poll_interval: "60s",
      webhook_secret: "",
      poll_enabled: true,
      auto_push_enabled: true,
      auto_apply_enabled: true,
      webhook_enabled: true,
    });
    expect(d.git_sync.author_email).toContain("@");
  });

  it("has no registries, no trusted proxies, no domain, no public host and no master secret", () => {
    expect(d.registries).toEqual([]);
    expect(d.trusted_proxies).toEqual([]);
    expect(d.domain).toBe("");
    expect(d.public_host).toBe("");
    expect(d.master_secret).toBe("");
  });

  it("returns a fresh object each call", () => {
    const a = defaults();
    a.metrics.tiers.pop();
    a.ratelimit.burst = 1;
    expect(defaults().metrics.tiers).toHaveLength(4);
    expect(defaults().ratelimit.burst).toBe(50);
  });

  it("needs only a master secret and a tls email to validate", () => {
    expect(() => validateConfig(valid())).not.toThrow();
  });
});

describe("effectiveHttpListenAddr", () => {
  const withTls = (mode: Config["tls"]["mode"], http: string | null): Config => {
    const c = valid();
    c.tls.mode = mode;
    c.http_listen_addr = http;
    return c;
  };

  it("listens on :80 by default when tls.mode is auto or local", () => {
    expect(effectiveHttpListenAddr(withTls("auto", null))).toBe(":80");
    expect(effectiveHttpListenAddr(withTls("local", null))).toBe(":80");
  });

  it("has no plain listener by default when tls.mode is custom or off", () => {
    expect(effectiveHttpListenAddr(withTls("custom", null))).toBe("");
    expect(effectiveHttpListenAddr(withTls("off", null))).toBe("");
  });

  it("uses an explicit address", () => {
    expect(effectiveHttpListenAddr(withTls("auto", "127.0.0.1:8081"))).toBe("127.0.0.1:8081");
    expect(effectiveHttpListenAddr(withTls("custom", ":8000"))).toBe(":8000");
  });

  it("disables the listener when explicitly empty", () => {
    expect(effectiveHttpListenAddr(withTls("auto", ""))).toBe("");
    expect(effectiveHttpListenAddr(withTls("local", ""))).toBe("");
  });

  it("ignores an explicit address when tls.mode is off", () => {
    expect(effectiveHttpListenAddr(withTls("off", ":80"))).toBe("");
  });
});

describe("validateConfig", () => {
  it.each(["auto", "custom", "off", "local"] as const)("accepts tls.mode %s", (mode) => {
    const c = valid();
    c.tls.mode = mode;
    expect(() => validateConfig(c)).not.toThrow();
  });

  it("accepts the address forms SPEC.md uses", () => {
    const c = valid();
    c.listen_addr = "0.0.0.0:443";
    c.http_listen_addr = "[::]:80";
    c.management_addr = "::1";
    c.trusted_proxies = ["10.0.0.0/8", "::1", "fd00::/8"];
    c.ratelimit.by = "header:X-Real-IP";
    c.ratelimit.window = "1m30s";
    c.domain = "deploy.example.com";
    c.public_host = "203.0.113.10";
    c.audit_retention_days = 0;
    expect(() => validateConfig(c)).not.toThrow();
  });

  it("accepts an empty management_addr (all interfaces) and localhost", () => {
    for (const addr of ["", "0.0.0.0", "localhost", "127.0.0.1"]) {
      const c = valid();
      c.management_addr = addr;
      expect(() => validateConfig(c)).not.toThrow();
    }
  });

  it("rejects an unknown top-level key", () => {
    const err = expectRejected((c) => {
      c.listen = ":443";
    }, "listen");
    expect(err.message).toBe("config: listen: unknown key");
  });

  it("rejects an unknown nested key", () => {
    expectRejected((c) => {
      c.tls.emial = "x@y.z";
    }, "tls.emial");
    expectRejected((c) => {
      c.git_sync.token = "x";
    }, "git_sync.token");
    expectRejected((c) => {
      c.metrics.tiers[1].keep = "1d";
    }, "metrics.tiers.1.keep");
  });

  it("rejects a bad tls.mode, listing the allowed ones", () => {
    const err = expectRejected((c) => {
      c.tls.mode = "letsencrypt";
    }, "tls.mode");
    expect(err.message).toContain("auto, custom, off, local");
    expect(err.message).toContain('"letsencrypt"');
  });

  it("requires tls.email when tls.mode is auto", () => {
    expectRejected((c) => {
      c.tls.email = "";
    }, "tls.email");
  });

  it("does not require tls.email for the other modes", () => {
    for (const mode of ["custom", "off", "local"] as const) {
      const c = valid();
      c.tls = { ...c.tls, mode, email: "" };
      expect(() => validateConfig(c)).not.toThrow();
    }
  });

  it("rejects a tls.email that is not an address", () => {
    expectRejected((c) => {
      c.tls.email = "ops at example";
    }, "tls.email");
  });

  it.each(["443", "localhost", ":", ":https", "::1:443", "1.2.3.4:", ":443 ", "http://:443"])(
    "rejects listen_addr %p",
    (addr) => {
      expectRejected((c) => {
        c.listen_addr = addr;
      }, "listen_addr");
    },
  );

  it("rejects a port above 65535", () => {
    expectRejected((c) => {
      c.listen_addr = ":65536";
    }, "listen_addr");
    expectRejected((c) => {
      c.http_listen_addr = "0.0.0.0:99999";
    }, "http_listen_addr");
  });

  it("rejects an empty listen_addr", () => {
    expectRejected((c) => {
      c.listen_addr = "";
    }, "listen_addr");
  });

  it("rejects a bad http_listen_addr", () => {
    expectRejected((c) => {
      c.http_listen_addr = "80";
    }, "http_listen_addr");
  });

  it("rejects a management_port out of range or not a whole number", () => {
    for (const port of [-1, 65536, 8443.5, "8443"]) {
      expectRejected((c) => {
        c.management_port = port;
      }, "management_port");
    }
  });

  it.each(["example.com", "127.0.0.1:8443", "0.0.0.0 ", "cafe", "999.1.1.1", "1.2.3.4.5", ":::::"])(
    "rejects management_addr %p, which is not an IP address",
    (addr) => {
      expectRejected((c) => {
        c.management_addr = addr;
      }, "management_addr");
    },
  );

  it("rejects a trusted_proxies entry that is not an address or CIDR, naming its index", () => {
    const err = expectRejected((c) => {
      c.trusted_proxies = ["10.0.0.0/8", "10.0.0.0/33"];
    }, "trusted_proxies.1");
    expect(err.message).toContain("10.0.0.0/33");
    expectRejected((c) => {
      c.trusted_proxies = ["proxy.internal"];
    }, "trusted_proxies.0");
  });

  it.each(["10", "1x", "h1", "", "-1s", "1 h"])("rejects ratelimit.window %p", (window) => {
    expectRejected((c) => {
      c.ratelimit.window = window;
    }, "ratelimit.window");
  });

  it("rejects a zero ratelimit.window", () => {
    expectRejected((c) => {
      c.ratelimit.window = "0s";
    }, "ratelimit.window");
  });

  it("rejects ratelimit requests and burst below one", () => {
    expectRejected((c) => {
      c.ratelimit.requests = 0;
    }, "ratelimit.requests");
    expectRejected((c) => {
      c.ratelimit.burst = -5;
    }, "ratelimit.burst");
  });

  it("rejects an unknown ratelimit.by", () => {
    for (const by of ["cookie", "header:", "header:X Real"]) {
      expectRejected((c) => {
        c.ratelimit.by = by;
      }, "ratelimit.by");
    }
  });

  it("rejects bad durations in metrics tiers, naming the tier", () => {
    expectRejected((c) => {
      c.metrics.tiers[2].resolution = "5 minutes";
    }, "metrics.tiers.2.resolution");
    expectRejected((c) => {
      c.metrics.tiers[0].retention = "forever";
    }, "metrics.tiers.0.retention");
  });

  it("rejects a tier that keeps less than its resolution or has no resolution", () => {
    expectRejected((c) => {
      c.metrics.tiers[3].retention = "30m";
    }, "metrics.tiers.3.retention");
    expectRejected((c) => {
      c.metrics.tiers[0].resolution = "0";
    }, "metrics.tiers.0.resolution");
  });

  it("rejects an empty list of tiers", () => {
    expectRejected((c) => {
      c.metrics.tiers = [];
    }, "metrics.tiers");
  });

  it("rejects a negative audit_retention_days", () => {
    expectRejected((c) => {
      c.audit_retention_days = -1;
    }, "audit_retention_days");
  });

  it("rejects a missing master_secret", () => {
    const err = expectRejected((c) => {
      c.master_secret = "";
    }, "master_secret");
    expect(err.message).toContain("required");
  });

  it("rejects a master_secret shorter than 16 characters", () => {
    expectRejected((c) => {
      c.master_secret = "short";
    }, "master_secret");
  });

  it("never echoes the master_secret value in its error", () => {
    const err = expectRejected((c) => {
      c.master_secret = "my-real-secret";
    }, "master_secret");
    expect(err.message).not.toContain("my-real-secret");
  });

  it("never echoes a git credential in its error", () => {
    // an unquoted all-digit secret in YAML arrives as a number
    const err = expectRejected((c) => {
      c.git_sync.webhook_secret = 982734982374;
    }, "git_sync.webhook_secret");
    expect(err.message).not.toContain("982734982374");
  });

  it("rejects wrong types, naming the key", () => {
    expectRejected((c) => {
      c.registries = "ghcr";
    }, "registries");
    expectRejected((c) => {
      c.git_sync.enabled = "yes";
    }, "git_sync.enabled");
    expectRejected((c) => {
      c.data_dir = 42;
    }, "data_dir");
    expectRejected((c) => {
      c.tls = "auto";
    }, "tls");
  });

  it("rejects an empty data_dir or apps_dir", () => {
    expectRejected((c) => {
      c.data_dir = "";
    }, "data_dir");
    expectRejected((c) => {
      c.apps_dir = "";
    }, "apps_dir");
  });

  it("rejects a domain that is not a lower-case host name", () => {
    expectRejected((c) => {
      c.domain = "https://deploy.example.com";
    }, "domain");
    expectRejected((c) => {
      c.domain = "Deploy.Example.com";
    }, "domain");
  });

  it("requires git_sync.remote when git sync is enabled", () => {
    expectRejected((c) => {
      c.git_sync.enabled = true;
    }, "git_sync.remote");
  });

  it("refuses ssh_key_path together with https_token", () => {
    expectRejected((c) => {
      c.git_sync.remote = "https://git.example.com/ops/apps.git";
      c.git_sync.ssh_key_path = "/root/.ssh/id_ed25519";
      c.git_sync.https_token = "tok";
    }, "git_sync.https_token");
  });

  it("rejects a bad git_sync.poll_interval", () => {
    expectRejected((c) => {
      c.git_sync.poll_interval = "60";
    }, "git_sync.poll_interval");
  });
});

describe("ACME settings", () => {
  it("default to Let's Encrypt and accept an https directory and a CA file", () => {
    const d = defaults();
    expect(d.tls.acme_directory).toBe("");
    expect(d.tls.acme_ca_file).toBe("");
    const c = defaults();
    c.master_secret = "0123456789abcdef0123";
    c.tls.email = "ops@example.com";
    c.tls.acme_directory = "https://127.0.0.1:14000/dir";
    expect(() => validateConfig(c)).not.toThrow();
    c.tls.acme_directory = "http://insecure.example/dir";
    expect(() => validateConfig(c)).toThrow("config: tls.acme_directory: must be an https:// ACME directory URL");
  });
});
