/** Sundeck labels: endpoints with hosts, paths, ports and TLS, and app settings (rate limit, allowlist, registries). */
import { describe, expect, it } from "bun:test";
import { parseAppLabels } from "../../../src/compose/labels";
import { ComposeError } from "../../../src/compose/model";
import { parseCompose } from "../../../src/compose/parse";

/** A project whose services carry the given labels (and `extra` service keys). */
function project(services: Record<string, { labels?: Record<string, string>; extra?: string }>) {
  const body = Object.entries(services)
    .map(([name, s]) => {
      const labels = Object.entries(s.labels ?? {})
        .map(([k, v]) => `      ${k}: ${JSON.stringify(v)}\n`)
        .join("");
      return `  ${name}:\n    image: x\n${s.extra ?? ""}${labels ? `    labels:\n${labels}` : ""}`;
    })
    .join("");
  return parseCompose(`services:\n${body}`, {});
}

const labels = (l: Record<string, string>, extra = "    expose: ['3000']\n") =>
  parseAppLabels(project({ web: { labels: l, extra } }));

function labelError(l: Record<string, string>, extra?: string): ComposeError {
  try {
    labels(l, extra);
  } catch (e) {
    if (e instanceof ComposeError) return e;
    throw e;
  }
  throw new Error("accepted");
}

describe("parseAppLabels: endpoints", () => {
  it("reads nothing from an app without sundeck labels", () => {
    expect(labels({ "com.example.x": "1" })).toEqual({ endpoints: [], ratelimit: null, allow: null, registries: null });
  });

  it("reads one endpoint with every field", () => {
    expect(
      labels({ "sundeck.domain": "App.Example.com", "sundeck.port": "8080", "sundeck.path": "/api/", "sundeck.tls": "local" })
        .endpoints,
    ).toEqual([{ service: "web", hosts: ["app.example.com"], port: 8080, path: "/api", tls: "local" }]);
  });

  it("reads several comma-separated hosts, lower-cased and deduplicated", () => {
    expect(labels({ "sundeck.domain": " a.example.com, B.example.com ,a.example.com" }).endpoints[0].hosts).toEqual([
      "a.example.com",
      "b.example.com",
    ]);
  });

  it("accepts a wildcard first label", () => {
    expect(labels({ "sundeck.domain": "*.apps.example.com" }).endpoints[0].hosts).toEqual(["*.apps.example.com"]);
  });

  it("defaults the path to / and tls to null", () => {
    const [ep] = labels({ "sundeck.domain": "a.example.com" }).endpoints;
    expect(ep.path).toBe("/");
    expect(ep.tls).toBeNull();
  });

  it("infers the port from the single exposed or published container port", () => {
    expect(labels({ "sundeck.domain": "a.example.com" }).endpoints[0].port).toBe(3000);
    expect(labels({ "sundeck.domain": "a.example.com" }, "    ports: ['8080:80']\n").endpoints[0].port).toBe(80);
    expect(labels({ "sundeck.domain": "a.example.com" }, "    ports: ['8080:80']\n    expose: [80]\n").endpoints[0].port).toBe(
      80,
    );
  });

  it("requires a port when the service exposes none or several", () => {
    expect(labelError({ "sundeck.domain": "a.example.com" }, "").message).toContain(
      "label sundeck.port: is required when the service exposes no port",
    );
    expect(labelError({ "sundeck.domain": "a.example.com" }, "    expose: [80, 81]\n").message).toContain("more than one port");
  });

  it("reads several endpoints of one service", () => {
    const result = labels({
      "sundeck.endpoints.api.domain": "api.example.com",
      "sundeck.endpoints.api.port": "8080",
      "sundeck.endpoints.api.tls": "custom",
      "sundeck.endpoints.admin.domain": "example.com",
      "sundeck.endpoints.admin.path": "/admin",
      "sundeck.endpoints.admin.port": "9000",
    });
    expect(result.endpoints).toEqual([
      { service: "web", hosts: ["api.example.com"], port: 8080, path: "/", tls: "custom" },
      { service: "web", hosts: ["example.com"], port: 9000, path: "/admin", tls: null },
    ]);
  });

  it("reads endpoints from several services", () => {
    const p = project({
      web: { labels: { "sundeck.domain": "example.com", "sundeck.port": "80" } },
      api: { labels: { "sundeck.domain": "example.com", "sundeck.path": "/api", "sundeck.port": "3000" } },
    });
    expect(parseAppLabels(p).endpoints.map((e) => `${e.service} ${e.hosts[0]}${e.path}`)).toEqual([
      "web example.com/",
      "api example.com/api",
    ]);
  });

  it("refuses the same host and path claimed twice", () => {
    const p = project({
      web: { labels: { "sundeck.domain": "example.com", "sundeck.port": "80" } },
      api: { labels: { "sundeck.domain": "EXAMPLE.com", "sundeck.port": "3000", "sundeck.path": "/" } },
    });
    expect(() => parseAppLabels(p)).toThrow('service "api": host example.com with path / is claimed twice');
    const slash = labelError({
      "sundeck.endpoints.1.domain": "example.com",
      "sundeck.endpoints.1.path": "/x",
      "sundeck.endpoints.2.domain": "example.com",
      "sundeck.endpoints.2.path": "/x/",
    });
    expect(slash.message).toContain("host example.com with path /x is claimed twice");
  });

  it.each([
    [{ "sundeck.domain": "" }, "sundeck.domain", "at least one host"],
    [{ "sundeck.domain": "exa mple.com" }, "sundeck.domain", "not a valid host name"],
    [{ "sundeck.domain": "-bad.example.com" }, "sundeck.domain", "not a valid host name"],
    [{ "sundeck.domain": "a..example.com" }, "sundeck.domain", "not a valid host name"],
    [{ "sundeck.domain": "a.*.example.com" }, "sundeck.domain", "not a valid host name"],
    [{ "sundeck.domain": "*" }, "sundeck.domain", "not a valid host name"],
    [{ "sundeck.domain": "under_score.example.com" }, "sundeck.domain", "not a valid host name"],
    [{ "sundeck.domain": `${"a".repeat(64)}.com` }, "sundeck.domain", "not a valid host name"],
    [{ "sundeck.domain": "example.com:8080" }, "sundeck.domain", "not a valid host name"],
    [{ "sundeck.domain": "a.example.com", "sundeck.port": "0" }, "sundeck.port", "not a port"],
    [{ "sundeck.domain": "a.example.com", "sundeck.port": "65536" }, "sundeck.port", "not a port"],
    [{ "sundeck.domain": "a.example.com", "sundeck.port": "http" }, "sundeck.port", "not a port"],
    [{ "sundeck.domain": "a.example.com", "sundeck.path": "api" }, "sundeck.path", "must start with /"],
    [{ "sundeck.domain": "a.example.com", "sundeck.path": "/a/../b" }, "sundeck.path", "not a valid path prefix"],
    [{ "sundeck.domain": "a.example.com", "sundeck.path": "/a?b" }, "sundeck.path", "not a valid path prefix"],
    [{ "sundeck.domain": "a.example.com", "sundeck.tls": "on" }, "sundeck.tls", "must be auto, custom, local or off"],
    [{ "sundeck.port": "80" }, "sundeck.port", "needs sundeck.domain"],
    [{ "sundeck.endpoints.1.path": "/x" }, "sundeck.endpoints.1.path", "needs sundeck.endpoints.1.domain"],
    [
      { "sundeck.endpoints.x.domain": "a.example.com", "sundeck.endpoints.x.port": "-1" },
      "sundeck.endpoints.x.port",
      "not a port",
    ],
  ])("rejects %j naming the label", (l, label, why) => {
    const err = labelError(l);
    expect(err.rule).toBe("label");
    expect(err.service).toBe("web");
    expect(err.message).toContain(`label ${label}: `);
    expect(err.message).toContain(why);
  });

  it("refuses unknown sundeck labels, so typos do not pass silently", () => {
    expect(labelError({ "sundeck.domian": "a.example.com" }).message).toContain("unknown label sundeck.domian");
    expect(labelError({ "sundeck.endpoints.1.host": "a.example.com" }).message).toContain("unknown label");
  });
});

describe("parseAppLabels: app settings", () => {
  it("reads the rate limit override", () => {
    expect(
      labels({
        "sundeck.ratelimit.requests": "100",
        "sundeck.ratelimit.window": "1m",
        "sundeck.ratelimit.burst": "0",
        "sundeck.ratelimit.by": "header:X-Api-Key",
      }).ratelimit,
    ).toEqual({ requests: 100, window: "1m", burst: 0, by: "header:X-Api-Key" });
  });

  it("reads a partial rate limit override and day windows", () => {
    expect(labels({ "sundeck.ratelimit.window": "1d" }).ratelimit).toEqual({ window: "1d" });
    expect(labels({ "sundeck.ratelimit.by": "path" }).ratelimit).toEqual({ by: "path" });
  });

  it.each([
    ["sundeck.ratelimit.requests", "0"],
    ["sundeck.ratelimit.requests", "ten"],
    ["sundeck.ratelimit.burst", "-1"],
    ["sundeck.ratelimit.window", "soon"],
    ["sundeck.ratelimit.window", "0s"],
    ["sundeck.ratelimit.by", "cookie"],
    ["sundeck.ratelimit.by", "header:"],
  ])("rejects %s=%s", (label, value) => {
    const err = labelError({ [label]: value });
    expect(err.message).toContain(`label ${label}: `);
  });

  it("reads the access allowlist of addresses and CIDRs", () => {
    expect(labels({ "sundeck.access.allow": "10.0.0.0/8, 192.168.1.5 2001:db8::/32" }).allow).toEqual([
      "10.0.0.0/8",
      "192.168.1.5",
      "2001:db8::/32",
    ]);
    expect(labelError({ "sundeck.access.allow": "10.0.0.0/33" }).message).toContain("label sundeck.access.allow:");
    expect(labelError({ "sundeck.access.allow": "example.com" }).message).toContain("not an ip address or cidr");
    expect(labelError({ "sundeck.access.allow": " , " }).message).toContain("at least one");
  });

  it("reads registries, and none as an empty list", () => {
    expect(labels({ "sundeck.registries": "ghcr, private-reg" }).registries).toEqual(["ghcr", "private-reg"]);
    expect(labels({ "sundeck.registries": "none" }).registries).toEqual([]);
    expect(labels({}).registries).toBeNull();
    expect(labelError({ "sundeck.registries": "none,ghcr" }).message).toContain("none cannot be combined");
    expect(labelError({ "sundeck.registries": "bad name" }).message).toContain("not a registry name");
  });

  it("merges app settings given on several services when they agree, and refuses conflicts", () => {
    const same = project({
      web: { labels: { "sundeck.access.allow": "10.0.0.0/8" } },
      api: { labels: { "sundeck.access.allow": "10.0.0.0/8", "sundeck.ratelimit.requests": "5" } },
    });
    expect(parseAppLabels(same)).toMatchObject({ allow: ["10.0.0.0/8"], ratelimit: { requests: 5 } });
    const differ = project({
      web: { labels: { "sundeck.registries": "a" } },
      api: { labels: { "sundeck.registries": "b" } },
    });
    expect(() => parseAppLabels(differ)).toThrow("differs from the value on service web");
  });
});
