/** The route table routes by host (exact, then wildcard) and path prefix, builds from labels, looks up in O(1). */
import { describe, expect, it } from "bun:test";
import type { AppLabels, Endpoint } from "../../../src/compose/model";
import { buildRouteTable, prefixMatches, type RouteTableInput } from "../../../src/proxy/route-table";

const DEFAULTS = { ratelimit: { requests: 200, windowMs: 60_000, burst: 50, by: "ip" } };

function ep(service: string, hosts: string[], path = "/", port = 8080, tls: Endpoint["tls"] = null): Endpoint {
  return { service, hosts, port, path, tls };
}

function labels(endpoints: Endpoint[], extra: Partial<AppLabels> = {}): AppLabels {
  return { endpoints, ratelimit: null, allow: null, registries: null, ...extra };
}

function app(slug: string, endpoints: Endpoint[], extra: Partial<AppLabels> = {}, stopped = false) {
  return { slug, endpoints, labels: labels(endpoints, extra), stopped };
}

const upstreams: RouteTableInput["upstreams"] = (slug, service, port) => [`10.0.0.1:${port}`, `${slug}-${service}`];

const table = buildRouteTable({
  apps: [
    app("shop", [
      ep("web", ["shop.example.com", "www.shop.example.com"]),
      ep("api", ["shop.example.com"], "/api", 3000),
      ep("admin", ["shop.example.com"], "/api/admin", 4000),
    ]),
    app("blog", [ep("web", ["*.blog.example.com"], "/", 80, "local"), ep("web", ["blog.example.com"], "/", 80, "off")]),
    app("wild", [ep("web", ["*.example.com"]), ep("docs", ["*.example.com"], "/docs")]),
  ],
  upstreams,
  management: { hosts: ["Deck.Example.com", "[2001:DB8::1]"], upstream: "127.0.0.1:8443" },
  defaults: { ...DEFAULTS, tls: "auto" },
});

describe("route table lookup", () => {
  const cases: Array<[string, string, string | null, string | null, string?]> = [
    // host, path, expected app, expected service, expected prefix
    ["shop.example.com", "/", "shop", "web", "/"],
    ["shop.example.com", "/api", "shop", "api", "/api"],
    ["shop.example.com", "/api/", "shop", "api", "/api"],
    ["shop.example.com", "/api/users/1", "shop", "api", "/api"],
    ["shop.example.com", "/apix", "shop", "web", "/"],
    ["shop.example.com", "/api/admin", "shop", "admin", "/api/admin"],
    ["shop.example.com", "/api/admin/x", "shop", "admin", "/api/admin"],
    ["shop.example.com", "/api/administrator", "shop", "api", "/api"],
    ["SHOP.Example.COM", "/api", "shop", "api"],
    ["shop.example.com:8443", "/api", "shop", "api"],
    ["shop.example.com.", "/", "shop", "web"],
    ["www.shop.example.com", "/api", "shop", "web"],
    ["a.blog.example.com", "/", "blog", "web"],
    ["blog.example.com", "/", "blog", "web"],
    ["a.b.blog.example.com", "/", null, null],
    ["anything.example.com", "/", "wild", "web"],
    ["anything.example.com", "/docs/x", "wild", "docs"],
    ["example.com", "/", null, null],
    ["other.org", "/", null, null],
    ["", "/", null, null],
    ["deck.example.com", "/api/apps", null, ""],
    ["DECK.example.com:443", "/", null, ""],
    ["[2001:db8::1]:8443", "/", null, ""],
    ["[2001:db8:0:0::1]", "/", null, ""],
    ["2001:db8::1", "/", null, ""],
  ];
  for (const [host, path, appSlug, service, prefix] of cases) {
    it(`routes ${host || "(empty)"}${path} to ${appSlug ?? (service === "" ? "management" : "nothing")}`, () => {
      const r = table.lookup(host, path);
      if (appSlug === null && service === null) {
        expect(r).toBeNull();
        return;
      }
      expect(r).not.toBeNull();
      expect(r!.app).toBe(appSlug);
      expect(r!.service).toBe(service!);
      if (prefix) expect(r!.prefix).toBe(prefix);
    });
  }

  it("falls back to the wildcard when an exact host has no matching prefix", () => {
    const t = buildRouteTable({
      apps: [app("a", [ep("api", ["api.example.com"], "/api")]), app("b", [ep("web", ["*.example.com"])])],
      upstreams,
      defaults: DEFAULTS,
    });
    expect(t.lookup("api.example.com", "/api/x")!.app).toBe("a");
    expect(t.lookup("api.example.com", "/other")!.app).toBe("b");
  });

  it("carries upstreams, TLS mode and the management upstream", () => {
    expect(table.lookup("shop.example.com", "/api")!.upstreams).toEqual(["10.0.0.1:3000", "shop-api"]);
    expect(table.lookup("x.blog.example.com", "/")!.tls).toBe("local");
    expect(table.lookup("blog.example.com", "/")!.tls).toBe("off");
    expect(table.lookup("shop.example.com", "/")!.tls).toBe("auto");
    const m = table.lookup("deck.example.com", "/")!;
    expect(m.upstreams).toEqual(["127.0.0.1:8443"]);
    expect(m.ratelimit).toBeNull();
    expect(m.allow).toBeNull();
  });

  it("shares one route object between the hosts of an endpoint", () => {
    expect(table.lookup("shop.example.com", "/")).toBe(table.lookup("www.shop.example.com", "/x")!);
  });

  it("lists every host for certificates, with its TLS mode", () => {
    expect(table.hosts()).toEqual([
      "*.blog.example.com",
      "*.example.com",
      "2001:db8::1",
      "blog.example.com",
      "deck.example.com",
      "shop.example.com",
      "www.shop.example.com",
    ]);
    expect(table.hostTls().find((h) => h.host === "blog.example.com")!.tls).toBe("off");
    expect([...table.apps].sort()).toEqual(["blog", "shop", "wild"]);
  });
});

describe("route table building", () => {
  it("gives stopped apps routes without upstreams", () => {
    const t = buildRouteTable({ apps: [app("s", [ep("web", ["s.example.com"])], {}, true)], upstreams, defaults: DEFAULTS });
    const r = t.lookup("s.example.com", "/")!;
    expect(r.stopped).toBe(true);
    expect(r.upstreams).toEqual([]);
  });

  it("lets management, then running apps, then slug order win a contested host", () => {
    const t = buildRouteTable({
      apps: [
        app("b", [ep("web", ["x.example.com"])]),
        app("a", [ep("web", ["x.example.com"])], {}, true),
        app("c", [ep("web", ["deck.example.com"])]),
      ],
      upstreams,
      management: { hosts: ["deck.example.com"], upstream: "127.0.0.1:8443" },
      defaults: DEFAULTS,
    });
    expect(t.lookup("x.example.com", "/")!.app).toBe("b");
    expect(t.lookup("deck.example.com", "/")!.app).toBeNull();
    expect([...t.conflicts].sort()).toEqual(["deck.example.com/", "x.example.com/"]);
  });

  it("limits only apps whose labels ask for it, taking the fields they leave out from the defaults", () => {
    const t = buildRouteTable({
      apps: [
        app("a", [ep("web", ["a.example.com"])], { ratelimit: { requests: 5, window: "10s", by: "header:X-Api-Key" } }),
        app("b", [ep("web", ["b.example.com"])]),
      ],
      upstreams,
      defaults: DEFAULTS,
    });
    expect(t.lookup("a.example.com", "/")!.ratelimit).toEqual({
      requests: 5,
      windowMs: 10_000,
      burst: 50,
      by: "header:X-Api-Key",
      header: "x-api-key",
      id: "5/10000/50/header:X-Api-Key",
    });
    expect(t.lookup("b.example.com", "/")!.ratelimit).toBeNull();
  });

  it("builds the allowlist, denying everyone when no entry parses", () => {
    const t = buildRouteTable({
      apps: [
        app("a", [ep("web", ["a.example.com"])], { allow: ["10.0.0.0/8", "2001:db8::/32"] }),
        app("b", [ep("web", ["b.example.com"])], { allow: ["not-an-ip"] }),
      ],
      upstreams,
      defaults: DEFAULTS,
    });
    const a = t.lookup("a.example.com", "/")!.allow!;
    expect(a.has("10.1.2.3")).toBe(true);
    expect(a.has("::ffff:10.1.2.3")).toBe(true);
    expect(a.has("2001:db8::5")).toBe(true);
    expect(a.has("192.168.1.1")).toBe(false);
    expect(t.lookup("b.example.com", "/")!.allow!.has("10.1.2.3")).toBe(false);
  });
});

describe("prefixes and lookup cost", () => {
  it("matches prefixes on segment boundaries", () => {
    expect(prefixMatches("/", "/anything")).toBe(true);
    expect(prefixMatches("/api", "/api")).toBe(true);
    expect(prefixMatches("/api", "/api/x")).toBe(true);
    expect(prefixMatches("/api", "/apix")).toBe(false);
    expect(prefixMatches("/api", "/ap")).toBe(false);
  });

  it("looks up in constant work per request", () => {
    const apps = Array.from({ length: 2000 }, (_, i) => app(`app${i}`, [ep("web", [`app${i}.example.com`])]));
    const t = buildRouteTable({ apps, upstreams, defaults: DEFAULTS });
    const t0 = performance.now();
    for (let i = 0; i < 200_000; i++) t.lookup(`app${i % 2000}.example.com`, "/x");
    // generous bound: a map lookup plus a prefix scan, about 100 ns each
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
