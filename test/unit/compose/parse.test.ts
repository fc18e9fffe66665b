/** Parsing a compose file: document shape, YAML errors and limits, interpolation with casts, and per-service info. */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: compose interpolation syntax is the subject under test
import { describe, expect, it } from "bun:test";
import { ComposeError } from "../../../src/compose/model";
import { parseCompose } from "../../../src/compose/parse";

function parseError(text: string, env: Record<string, string> = {}): ComposeError {
  try {
    parseCompose(text, env);
  } catch (e) {
    if (e instanceof ComposeError) return e;
    throw e;
  }
  throw new Error("parsed");
}

const one = (body: string, env: Record<string, string> = {}) =>
  parseCompose(`services:\n  web:\n    image: nginx\n${body}`, env).services[0];

describe("parseCompose: document shape", () => {
  it("reads a minimal file into one service", () => {
    const p = parseCompose("services:\n  web:\n    image: nginx:1.25\n", {});
    expect(p.services.map((s) => s.name)).toEqual(["web"]);
    expect(p.services[0].image).toBe("nginx:1.25");
    expect(p.doc).toEqual({ services: { web: { image: "nginx:1.25" } } });
    expect(p.missingVars).toEqual([]);
  });

  it("accepts top-level version, name and x- extension keys", () => {
    const p = parseCompose('version: "3.8"\nname: shop\nx-common: {a: 1}\nservices:\n  web: {image: nginx}\n', {});
    expect(p.doc.version).toBe("3.8");
    expect(p.doc.name).toBe("shop");
  });

  it.each([
    ["a list", "- a\n- b\n", "compose file must be a mapping"],
    ["a scalar", "hello\n", "compose file must be a mapping"],
    ["an empty file", "", "compose file must be a mapping"],
    ["a file without services", "volumes: {}\n", "services must be a non-empty mapping"],
    ["empty services", "services: {}\n", "services must be a non-empty mapping"],
    ["services as a list", "services: [web]\n", "services must be a non-empty mapping"],
    ["volumes as a list", "services: {web: {image: x}}\nvolumes: [a]\n", "volumes must be a mapping"],
  ])("rejects %s", (_what, text, message) => {
    const err = parseError(text);
    expect(err.rule).toBe("schema");
    expect(err.message).toContain(message);
  });

  it("rejects an unknown top-level key by name", () => {
    const err = parseError("servics: {}\nservices: {web: {image: x}}\n");
    expect(err.rule).toBe("unknown-key");
    expect(err.message).toContain('unknown top-level key "servics"');
  });

  it("rejects a service that is not a mapping, naming it", () => {
    const err = parseError("services:\n  web: nginx\n");
    expect(err.service).toBe("web");
    expect(err.rule).toBe("schema");
  });

  it.each(["-web", "we b", "web!", "_web"])("rejects the service name %s", (name) => {
    expect(parseError(`services:\n  "${name}": {image: x}\n`).message).toContain("invalid service name");
  });

  it.each(["web", "Web2", "my_app.v1-x", "9lives"])("accepts the service name %s", (name) => {
    expect(parseCompose(`services:\n  "${name}": {image: x}\n`, {}).services[0].name).toBe(name);
  });

  it("rejects a __proto__ key instead of touching the object prototype", () => {
    expect(parseError("services:\n  web:\n    image: x\n    labels:\n      __proto__: {polluted: 1}\n").message).toContain(
      "__proto__",
    );
  });
});

describe("parseCompose: YAML errors", () => {
  it("reports a syntax error with its line number", () => {
    const err = parseError("services:\n  web:\n    image: nginx\n   bad: [unclosed\n");
    expect(err.rule).toBe("yaml");
    expect(err.service).toBeNull();
    expect(err.message).toMatch(/^Bad Request: invalid yaml at line \d+: /);
  });

  it("reports the line of a tab-indentation error", () => {
    expect(parseError("services:\n  web:\n\timage: nginx\n").message).toContain("at line 3");
  });

  it("rejects duplicate keys with the line of the second one", () => {
    const err = parseError("services:\n  web:\n    image: a\n    image: b\n");
    expect(err.rule).toBe("yaml");
    expect(err.message).toContain("line 4");
    expect(err.message).toContain("unique");
  });

  it("rejects a duplicate service", () => {
    expect(parseError("services:\n  web: {image: a}\n  web: {image: b}\n").message).toContain("line 3");
  });

  it("supports merge keys, with local keys winning", () => {
    const p = parseCompose("x-base: &b {image: a, restart: always}\nservices:\n  web:\n    <<: *b\n    image: c\n", {});
    expect(p.doc.services.web).toEqual({ image: "c", restart: "always" });
  });

  it("supports a list of merge sources", () => {
    const text = "x-a: &a {image: a}\nx-b: &b {restart: always}\nservices:\n  web:\n    <<: [*a, *b]\n";
    expect(parseCompose(text, {}).doc.services.web).toEqual({ image: "a", restart: "always" });
  });

  it("refuses an alias bomb instead of expanding it", () => {
    const lines = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 10; i++) {
      const prev = String.fromCharCode(96 + i);
      const cur = String.fromCharCode(97 + i);
      lines.push(`${cur}: &${cur} [${Array(10).fill(`*${prev}`).join(",")}]`);
    }
    const text = `x-bomb:\n${lines.map((l) => `  ${l}`).join("\n")}\nservices:\n  web: {image: x}\n`;
    const started = performance.now();
    const err = parseError(text);
    expect(err.rule).toBe("yaml");
    expect(err.message).toContain("too many aliases");
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it("refuses a file larger than 1 MiB", () => {
    const text = `services:\n  web:\n    image: x\n    command: "${"a".repeat(1024 * 1024)}"\n`;
    expect(parseError(text).message).toContain("larger than 1 MiB");
  });

  it.each([
    ["compose's !reset", "services:\n  web:\n    image: x\n    ports: !reset []\n"],
    ["!override", "services:\n  web:\n    image: x\n    ports: !override ['80:80']\n"],
    ["!!binary", "services:\n  web:\n    image: !!binary aGVsbG8=\n"],
    ["a custom tag", "services:\n  web: !custom\n    image: x\n"],
  ])("rejects %s tags", (_what, text) => {
    const err = parseError(text);
    expect(err.rule).toBe("yaml");
    expect(err.message).toContain("line");
  });

  it("accepts core schema tags", () => {
    expect(parseCompose("services:\n  web:\n    image: !!str 5\n", {}).services[0].image).toBe("5");
  });
});

describe("parseCompose: interpolation", () => {
  it("interpolates from the env map and lists variables that had no value", () => {
    const p = parseCompose("services:\n  web:\n    image: nginx:${TAG}\n    command: $CMD ${OTHER:-x}\n", { TAG: "1.25" });
    expect(p.services[0].image).toBe("nginx:1.25");
    expect(p.doc.services.web.command).toBe(" x");
    expect(p.missingVars).toEqual(["CMD"]);
  });

  it("casts interpolated booleans and numbers like compose does", () => {
    const env = { PRIV: "true", N: "3", RO: "yes", RETRIES: "5", EXT: "true" };
    const p = parseCompose(
      "services:\n  web:\n    image: x\n    privileged: ${PRIV}\n    read_only: ${RO}\n    deploy: {replicas: '${N}'}\n    healthcheck: {test: [CMD, 'true'], retries: $RETRIES}\nnetworks:\n  n: {external: $EXT}\n",
      env,
    );
    const web = p.doc.services.web;
    expect(web.privileged).toBe(true);
    expect(web.read_only).toBe(true);
    expect(web.deploy.replicas).toBe(3);
    expect(web.healthcheck.retries).toBe(5);
    expect(p.doc.networks.n.external).toBe(true);
    expect(p.services[0].replicas).toBe(3);
  });

  it("leaves strings that are not typed fields as strings", () => {
    const p = parseCompose("services:\n  web:\n    image: x\n    environment: {A: '${N}'}\n", { N: "3" });
    expect(p.doc.services.web.environment.A).toBe("3");
  });

  it("fails on a required variable with the interpolation rule", () => {
    const err = parseError("services:\n  web:\n    image: ${IMAGE:?set IMAGE}\n");
    expect(err.rule).toBe("interpolation");
    expect(err.message).toContain("required variable IMAGE");
  });
});

describe("parseCompose: service info", () => {
  it("reads env names from a list and a map, never values", () => {
    expect(one("    environment:\n      - A=1\n      - B=\n      - C=x=y\n").envKeys).toEqual(["A", "B", "C"]);
    expect(one("    environment:\n      A: 1\n      B: ''\n").envKeys).toEqual(["A", "B"]);
  });

  it("fills variables listed without a value from the app env, never from the process", () => {
    process.env.SUNDECK_PASSTHROUGH_PROBE = "leak";
    try {
      const text =
        "services:\n  web:\n    build:\n      context: .\n      args: [VERSION, SUNDECK_PASSTHROUGH_PROBE]\n    environment:\n      - API_KEY\n      - SUNDECK_PASSTHROUGH_PROBE\n  api:\n    image: x\n    environment:\n      API_KEY:\n      SUNDECK_PASSTHROUGH_PROBE:\n";
      const p = parseCompose(text, { API_KEY: "k$1", VERSION: "2" });
      expect(p.doc.services.web.environment).toEqual(["API_KEY=k$1"]);
      expect(p.doc.services.web.build.args).toEqual(["VERSION=2"]);
      expect(p.doc.services.api.environment).toEqual({ API_KEY: "k$1" });
      expect(p.services[0].envKeys).toEqual(["API_KEY"]);
    } finally {
      delete process.env.SUNDECK_PASSTHROUGH_PROBE;
    }
  });

  it("reads labels from a list and a map as strings", () => {
    expect(one("    labels:\n      - a=1\n      - b\n      - c=x=y\n").labels).toEqual({ a: "1", b: "", c: "x=y" });
    expect(one("    labels:\n      a: 1\n      b: true\n      c: text\n").labels).toEqual({ a: "1", b: "true", c: "text" });
  });

  it("reads replicas from deploy.replicas, else scale", () => {
    expect(one("    deploy: {replicas: 3}\n").replicas).toBe(3);
    expect(one("    scale: 2\n").replicas).toBe(2);
    expect(one("").replicas).toBeNull();
    expect(parseError("services:\n  web:\n    image: x\n    scale: -1\n").rule).toBe("schema");
  });

  it("sees a healthcheck unless it is disabled", () => {
    expect(one("    healthcheck: {test: [CMD, 'true']}\n").hasHealthcheck).toBe(true);
    expect(one("    healthcheck: {test: 'curl -f localhost'}\n").hasHealthcheck).toBe(true);
    expect(one("    healthcheck: {disable: true}\n").hasHealthcheck).toBe(false);
    expect(one("    healthcheck: {test: [NONE]}\n").hasHealthcheck).toBe(false);
    expect(one("    healthcheck: {test: NONE}\n").hasHealthcheck).toBe(false);
    expect(one("").hasHealthcheck).toBe(false);
  });

  it("reads image, build and pull policy", () => {
    const s = parseCompose("services:\n  web:\n    build: .\n    pull_policy: always\n", {}).services[0];
    expect(s.image).toBeNull();
    expect(s.hasBuild).toBe(true);
    expect(s.pullPolicy).toBe("always");
  });

  it("lists named volumes only, from short and long syntax", () => {
    const s = one(
      "    volumes:\n      - data:/data\n      - ./local:/local\n      - /srv:/srv\n      - /anonymous\n      - type: volume\n        source: cache\n        target: /cache\n      - type: bind\n        source: ./x\n        target: /x\n      - type: tmpfs\n        target: /tmp\n      - data:/again:ro\n",
    );
    expect(s.namedVolumes).toEqual(["data", "cache"]);
  });

  it("reads sundeck.scalable as a boolean", () => {
    expect(one("    labels: {sundeck.scalable: 'true'}\n").scalable).toBe(true);
    expect(one("    labels: [sundeck.scalable=false]\n").scalable).toBe(false);
    expect(one("").scalable).toBeNull();
    const err = parseError("services:\n  web:\n    image: x\n    labels: {sundeck.scalable: maybe}\n");
    expect(err.rule).toBe("label");
    expect(err.service).toBe("web");
  });

  it("rejects a malformed port naming the service", () => {
    const err = parseError("services:\n  web:\n    image: x\n    ports: ['80:http']\n");
    expect(err.service).toBe("web");
    expect(err.rule).toBe("schema");
    expect(err.message).toContain('invalid port "80:http"');
  });
});
