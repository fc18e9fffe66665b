/** The client config file: its XDG path, a 0600 round-trip, clear errors for malformed files and values. */
import { describe, expect, it } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import {
  type ClientConfig,
  checkApiKey,
  checkUrl,
  clientConfigPath,
  loadClientConfig,
  maskKey,
  resolveTarget,
  saveClientConfig,
} from "../../../src/client/config";
import { tempDir } from "../../helpers/tmp";

const KEY = `sd_${"ab12".repeat(16)}`;
const OTHER = `sd_${"cd34".repeat(16)}`;

const cfg = (): ClientConfig => ({
  contexts: { prod: { url: "https://deploy.example.com", api_key: KEY }, lab: { url: "http://10.0.0.5:8443", api_key: OTHER } },
  current_context: "prod",
});

describe("clientConfigPath", () => {
  it("uses XDG_CONFIG_HOME, else ~/.config", () => {
    expect(clientConfigPath({ XDG_CONFIG_HOME: "/x/cfg", HOME: "/home/a" })).toBe("/x/cfg/sundeck/client.yaml");
    expect(clientConfigPath({ HOME: "/home/a" })).toBe("/home/a/.config/sundeck/client.yaml");
    // the XDG spec says relative values are ignored
    expect(clientConfigPath({ XDG_CONFIG_HOME: "rel", HOME: "/home/a" })).toBe("/home/a/.config/sundeck/client.yaml");
  });
});

describe("loadClientConfig and saveClientConfig", () => {
  it("round-trips through a 0600 YAML file in a private directory", () => {
    const path = join(tempDir(), "nested", "sundeck", "client.yaml");
    saveClientConfig(cfg(), path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(path, "..")).mode & 0o777).toBe(0o700);
    expect(parse(readFileSync(path, "utf8"))).toEqual(cfg());
    expect(loadClientConfig(path)).toEqual(cfg());
  });

  it("reads a missing or empty file as no contexts", () => {
    const dir = tempDir();
    expect(loadClientConfig(join(dir, "none.yaml"))).toEqual({ contexts: {}, current_context: "" });
    writeFileSync(join(dir, "empty.yaml"), "");
    expect(loadClientConfig(join(dir, "empty.yaml"))).toEqual({ contexts: {}, current_context: "" });
  });

  it("names the file and the problem when it is malformed", () => {
    const dir = tempDir();
    const cases: Array<[string, RegExp]> = [
      ["contexts: [1, 2]\n", /contexts must be a mapping/],
      ["contexts:\n  a: { url: 1 }\n", /context a needs url and api_key/],
      ["current_context: 3\n", /current_context must be a string/],
      ["- a\n", /must be a mapping/],
      ["contexts: {a: [\n", /not valid YAML/],
    ];
    for (const [text, why] of cases) {
      const p = join(dir, "c.yaml");
      writeFileSync(p, text);
      expect(() => loadClientConfig(p)).toThrow(why);
      expect(() => loadClientConfig(p)).toThrow(p);
    }
  });
});

describe("checks", () => {
  it("accepts http(s) URLs and drops a trailing slash", () => {
    expect(checkUrl("https://deploy.example.com/")).toBe("https://deploy.example.com");
    expect(checkUrl("http://127.0.0.1:8443")).toBe("http://127.0.0.1:8443");
    expect(checkUrl("https://example.com/sundeck/")).toBe("https://example.com/sundeck");
    for (const bad of ["deploy.example.com", "ftp://x", "https://u:p@x", "https://x/?a=1", ""]) {
      expect(() => checkUrl(bad)).toThrow(/invalid URL/);
    }
  });

  it("accepts only sd_ and 64 hex characters as a key", () => {
    expect(checkApiKey(KEY)).toBe(KEY);
    for (const bad of ["sd_123", `sd_${"G".repeat(64)}`, KEY.slice(3), `${KEY}0`, `SD_${KEY.slice(3)}`]) {
      expect(() => checkApiKey(bad)).toThrow(/invalid API key/);
    }
  });

  it("masks keys to their first and last four characters", () => {
    expect(maskKey(KEY)).toBe("sd_ab12…ab12");
    expect(maskKey(KEY)).not.toContain(KEY.slice(7, -4));
    expect(maskKey("nonsense")).toBe("sd_…");
  });
});

describe("resolveTarget", () => {
  it("uses the current context", () => {
    expect(resolveTarget(cfg(), { env: {} })).toEqual({
      url: "https://deploy.example.com",
      apiKey: KEY,
      context: "prod",
      keyFrom: "context prod",
    });
  });

  it("lets SUNDECK_URL and SUNDECK_API_KEY override the current context", () => {
    const t = resolveTarget(cfg(), { env: { SUNDECK_URL: "http://ci.local:8443/", SUNDECK_API_KEY: OTHER } });
    expect(t).toEqual({ url: "http://ci.local:8443", apiKey: OTHER, context: null, keyFrom: "SUNDECK_API_KEY" });
    // no config at all is fine with both set
    expect(
      resolveTarget({ contexts: {}, current_context: "" }, { env: { SUNDECK_URL: "http://x", SUNDECK_API_KEY: KEY } }).url,
    ).toBe("http://x");
  });

  it("takes SUNDECK_API_KEY alone with the current context's URL", () => {
    const t = resolveTarget(cfg(), { env: { SUNDECK_API_KEY: OTHER } });
    expect(t).toMatchObject({ url: "https://deploy.example.com", apiKey: OTHER, context: "prod" });
  });

  it("refuses half an override or nothing to go on", () => {
    expect(() => resolveTarget(cfg(), { env: { SUNDECK_URL: "http://x" } })).toThrow(/without SUNDECK_API_KEY/);
    const none: ClientConfig = { contexts: {}, current_context: "" };
    expect(() => resolveTarget(none, { env: { SUNDECK_API_KEY: KEY } })).toThrow(/set SUNDECK_URL too/);
    expect(() => resolveTarget(none, { env: {} })).toThrow(/sundeck context add/);
    expect(() => resolveTarget(cfg(), { env: { SUNDECK_URL: "http://x", SUNDECK_API_KEY: "sd_bad" } })).toThrow(
      /invalid API key in SUNDECK_API_KEY/,
    );
  });

  it("prefers an explicit --context over the environment", () => {
    const t = resolveTarget(cfg(), { context: "lab", env: { SUNDECK_URL: "http://x", SUNDECK_API_KEY: KEY } });
    expect(t).toMatchObject({ url: "http://10.0.0.5:8443", apiKey: OTHER, context: "lab" });
    expect(() => resolveTarget(cfg(), { context: "nope", env: {} })).toThrow('unknown context "nope" (known: lab, prod)');
  });
});
