/**
 * The body of PUT /api/apps/{slug}/endpoints checked entry by entry (each 400 names the entry), and the compose text
 * it deploys: the same text when nothing changes, the deploy's own refusals, a current file that no longer reads.
 */
import { describe, expect, it } from "bun:test";
import { join } from "node:path";
import { ComposeError } from "../../../../src/compose/model";
import { prepare } from "../../../../src/compose/prepare";
import { HttpError } from "../../../../src/lib/errors";
import { checkEntries, editEndpoints } from "../../../../src/modules/deploys/endpoint-edit";
import { thrown } from "../../../helpers/thrown";
import { tempDir } from "../../../helpers/tmp";

const SERVICES = ["web", "api"];
const entry = (over: Record<string, unknown> = {}) => ({ service: "web", domain: "a.example.com", port: 8080, ...over });

describe("checkEntries", () => {
  it("normalises what it accepts: lower-case host, path / by default and without a trailing slash, tls null", () => {
    expect(
      checkEntries(
        [
          entry({ domain: " A.Example.COM " }),
          entry({ path: "/api/", tls: "Local" }),
          entry({ service: "api", domain: "b.example.com", path: null }),
        ],
        SERVICES,
      ),
    ).toEqual([
      { service: "web", domain: "a.example.com", port: 8080, path: "/", tls: null },
      { service: "web", domain: "a.example.com", port: 8080, path: "/api", tls: "local" },
      { service: "api", domain: "b.example.com", port: 8080, path: "/", tls: null },
    ]);
    expect(checkEntries([], SERVICES)).toEqual([]);
    expect(checkEntries([entry({ domain: "*.example.com" })], SERVICES)[0].domain).toBe("*.example.com");
  });

  const CASES: Array<[what: string, entries: Record<string, unknown>[], reason: string]> = [
    ["an unknown service", [entry({ service: "db" })], 'endpoints[0] ("db", "a.example.com"): no service "db" in the app'],
    ["a bad host", [entry({ domain: "not a host" })], 'endpoints[0] ("web", "not a host"): domain is not a valid host name'],
    ["an empty host", [entry({ domain: "" })], "domain is not a valid host name"],
    ["several hosts in one entry", [entry({ domain: "a.example.com,b.example.com" })], "domain takes one host"],
    ["port 0", [entry({ port: 0 })], "port must be a whole number in 1-65535"],
    ["port 65536", [entry({ port: 65536 })], "port must be a whole number in 1-65535"],
    ["a port as text", [entry({ port: "8080" })], "port must be a whole number in 1-65535"],
    ["a fractional port", [entry({ port: 80.5 })], "port must be a whole number in 1-65535"],
    ["a path without /", [entry({ path: "api" })], "path must start with /"],
    ["a path with ..", [entry({ path: "/a/../b" })], 'path "/a/../b" is not a valid path prefix'],
    ["an unknown tls mode", [entry({ tls: "strict" })], "tls must be auto, custom, local or off"],
    [
      "a host and path claimed twice",
      [entry(), entry({ service: "api", path: "/" })],
      'endpoints[1] ("api", "a.example.com"): host a.example.com with path / is already endpoints[0]',
    ],
    ["the same path with a trailing slash", [entry({ path: "/x" }), entry({ path: "/x/" })], "with path /x is already"],
  ];
  for (const [what, entries, reason] of CASES) {
    it(`refuses ${what}, naming the entry`, () => {
      const e = thrown(() => checkEntries(entries as never, SERVICES), HttpError);
      expect(e.status).toBe(400);
      expect(e.reason).toContain(reason);
    });
  }

  it("takes one host under several paths, and one path under several hosts", () => {
    const ok = [entry(), entry({ path: "/api" }), entry({ domain: "b.example.com" })];
    expect(checkEntries(ok, SERVICES)).toHaveLength(3);
  });
});

describe("editEndpoints", () => {
  const dir = tempDir();
  const policy = {
    appDir: join(dir, "apps", "blog"),
    appsDir: join(dir, "apps"),
    dataDir: join(dir, "data"),
    allowedHostPaths: [],
  };
  const validate = (compose: string) => prepare(compose, "", policy);
  const COMPOSE = `services:
  web:
    image: x
    expose: ["8080"]
    labels:
      sundeck.domain: a.example.com
`;

  it("deploys the same text when the endpoints asked for are the ones it routes (the port inferred counts)", () => {
    expect(editEndpoints({ compose: COMPOSE, env: "" }, [entry()], validate)).toBe(COMPOSE);
  });

  it("rewrites the labels otherwise", () => {
    const out = editEndpoints({ compose: COMPOSE, env: "" }, [entry({ domain: "b.example.com" })], validate);
    expect(out).toContain('sundeck.domain: b.example.com\n      sundeck.port: "8080"');
  });

  it("refuses what the deploy's own rules refuse, with their reason", () => {
    const unsafe = COMPOSE.replace("image: x", "image: x\n    privileged: true");
    const e = thrown(
      () => editEndpoints({ compose: unsafe, env: "" }, [entry({ domain: "b.example.com" })], validate),
      HttpError,
    );
    expect(e).toBeInstanceOf(ComposeError);
    expect(e.reason).toContain('service "web"');
  });

  it("answers 409 when the app's current file does not read", () => {
    const e = thrown(() => editEndpoints({ compose: "services: [", env: "" }, [], validate), HttpError);
    expect(e.status).toBe(409);
    expect(e.reason).toStartWith("the app's compose file does not read (invalid yaml");
  });

  it("replaces labels the parser refuses (a bad current label is what the edit fixes)", () => {
    const bad = COMPOSE.replace("sundeck.domain: a.example.com", "sundeck.domain: a.example.com\n      sundeck.port: nope");
    expect(editEndpoints({ compose: bad, env: "" }, [entry()], validate)).toBe(
      COMPOSE.replace("sundeck.domain: a.example.com", 'sundeck.domain: a.example.com\n      sundeck.port: "8080"'),
    );
  });
});
