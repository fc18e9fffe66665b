/** The Endpoints editor's rules (pages/apps/endpoint-rows.ts): rows of the app's endpoints, the checks, the PUT body. */
import { describe, expect, it } from "bun:test";
import { isValidHost, readPath } from "../../../../../src/compose/label-values";
import {
  bodyOf,
  changed,
  defaultPort,
  type EndpointRow,
  hostProblem,
  newRow,
  pathProblem,
  portProblem,
  rowProblems,
  rowsOf,
  serviceNames,
  withService,
} from "../../../../../src/dashboard/pages/apps/endpoint-rows";
import type { AppEndpoint, AppService } from "../../../../../src/shared/apps";

const service = (name: string, ports: string[] = []): AppService => ({
  name,
  image: `${name}:1`,
  replicas: 1,
  ports,
  scalable: { ok: true },
  containers: [],
});

const ENDPOINTS: AppEndpoint[] = [
  { service: "web", hosts: ["a.test", "www.a.test"], port: 8080, path: "/", tls: null },
  { service: "api", hosts: ["a.test"], port: 3000, path: "/api", tls: "local" },
];
const APP = { services: [service("web"), service("api"), service("db", ["127.0.0.1:5433:5432/tcp"])], endpoints: ENDPOINTS };
const SERVICES = ["web", "api", "db"];

const row = (over: Partial<EndpointRow>): EndpointRow => ({
  id: Math.random(),
  service: "web",
  domain: "a.test",
  port: "8080",
  path: "",
  tls: "",
  ...over,
});

describe("rows of the app's endpoints", () => {
  it("makes one row per host, with the whole-host path blank and the server's TLS as the empty choice", () => {
    const rows = rowsOf(ENDPOINTS);
    expect(rows.map(({ id: _, ...r }) => r)).toEqual([
      { service: "web", domain: "a.test", port: "8080", path: "", tls: "" },
      { service: "web", domain: "www.a.test", port: "8080", path: "", tls: "" },
      { service: "api", domain: "a.test", port: "3000", path: "/api", tls: "local" },
    ]);
    expect(new Set(rows.map((r) => r.id)).size).toBe(3);
  });

  it("lists the app's services, then any only an endpoint names", () => {
    expect(serviceNames(APP)).toEqual(SERVICES);
    expect(serviceNames({ services: [service("web")], endpoints: [{ ...ENDPOINTS[1], service: "old" }] })).toEqual([
      "web",
      "old",
    ]);
  });

  it("starts a service's port at its endpoint's, else its first published port's target, else blank", () => {
    expect(defaultPort(APP, "api")).toBe("3000");
    expect(defaultPort(APP, "db")).toBe("5432");
    expect(defaultPort({ services: [service("x", ["8000/tcp"])], endpoints: [] }, "x")).toBe("");
    expect(defaultPort(APP, "nope")).toBe("");
    expect(newRow(APP)).toMatchObject({ service: "web", domain: "", port: "8080", path: "", tls: "" });
    expect(newRow({ services: [], endpoints: [] })).toMatchObject({ service: "", port: "" });
  });

  it("moves a default or empty port along when the service changes, and keeps one the user typed", () => {
    expect(withService(APP, row({ port: "8080" }), "api").port).toBe("3000");
    expect(withService(APP, row({ port: "" }), "db").port).toBe("5432");
    expect(withService(APP, row({ port: "9000" }), "api")).toMatchObject({ service: "api", port: "9000" });
  });
});

describe("the browser's checks", () => {
  it.each([
    ["", "Enter a host name"],
    ["https://a.test", "without http://"],
    ["a.test/x", "Path field"],
    ["a.test:8080", "Port field"],
    ["a.test,b.test", "One host name per row"],
    ["-a.test", "is not a valid host name"],
    ["a..test", "is not a valid host name"],
    ["a_b.test", "is not a valid host name"],
    ["*", "is not a valid host name"],
    ["a.*.test", "is not a valid host name"],
  ])("refuses the host %p", (host, why) => {
    expect(hostProblem(host)).toContain(why);
  });

  it("agrees with the server's label reader on host names", () => {
    const corpus = [
      "a.test",
      "A.Test",
      "x",
      "*.a.test",
      "*.",
      "*",
      "**.a.test",
      "a-.test",
      "-a",
      "a-b.c-d",
      "1.2.3.4",
      "xn--bcher-kva.test",
      `${"a".repeat(63)}.test`,
      `${"a".repeat(64)}.test`,
      `${"a.".repeat(126)}ab`,
      `${"a.".repeat(127)}a`,
      "a test",
      "a.test.",
      "ä.test",
    ];
    for (const h of corpus) expect([h, hostProblem(h) === null]).toEqual([h, isValidHost(h.trim().toLowerCase())]);
  });

  it("asks for a container port in 1-65535", () => {
    expect(portProblem("")).toBe("Enter the container port");
    for (const p of ["0", "65536", "-1", "80.5", "http", "123456"]) expect(portProblem(p)).toBe("Enter a port from 1 to 65535");
    for (const p of ["1", "80", " 8080 ", "65535"]) expect(portProblem(p)).toBeNull();
  });

  it("takes an empty path as the whole host and agrees with the server on the others", () => {
    expect(pathProblem("")).toBeNull();
    expect(pathProblem("api")).toBe("A path starts with /");
    for (const p of ["/", "/api", "/api/", "/a/b-c_d", "/a b", "/a?x", "/a#x", "/a\\b", "//a", "/a/../b", "/./a", "/a/."]) {
      let server = true;
      try {
        readPath("web", "sundeck.path", p);
      } catch {
        server = false;
      }
      expect([p, pathProblem(p) === null]).toEqual([p, server]);
    }
  });

  it("flags a host and path listed twice on the later row, case and trailing slash aside", () => {
    const rows = [
      row({ id: 1, domain: "a.test" }),
      row({ id: 2, domain: "A.test", service: "api", port: "3000" }),
      row({ id: 3, domain: "a.test", path: "/api" }),
      row({ id: 4, domain: "a.test", path: "/api/" }),
      row({ id: 5, domain: "b.test", path: "/" }),
    ];
    const problems = rowProblems(rows, SERVICES);
    expect([...problems.keys()]).toEqual([2, 4]);
    expect(problems.get(2)).toEqual({ domain: "a.test/ is listed twice" });
    expect(problems.get(4)).toEqual({ domain: "a.test/api is listed twice" });
  });

  it("names every bad field of a row", () => {
    const problems = rowProblems([row({ id: 7, service: "gone", domain: "a b", port: "0", path: "x" })], SERVICES);
    expect(problems.get(7)).toEqual({
      service: "Choose one of the app's services",
      domain: expect.stringContaining("is not a valid host name"),
      port: "Enter a port from 1 to 65535",
      path: "A path starts with /",
    });
    expect(rowProblems(rowsOf(ENDPOINTS), SERVICES).size).toBe(0);
  });
});

describe("the PUT body", () => {
  it("has one entry per row: host lower-cased, port a number, path and TLS only when set", () => {
    const rows = [
      row({ domain: " Shop.Test ", port: " 8080 " }),
      row({ domain: "a.test", service: "api", port: "3000", path: "/api/", tls: "custom" }),
      row({ domain: "b.test", path: "/" }),
    ];
    expect(bodyOf(rows)).toEqual([
      { service: "web", domain: "shop.test", port: 8080 },
      { service: "api", domain: "a.test", port: 3000, path: "/api", tls: "custom" },
      { service: "web", domain: "b.test", port: 8080 },
    ]);
    expect(bodyOf([])).toEqual([]);
  });

  it("splits an endpoint of several hosts into one entry per host", () => {
    expect(bodyOf(rowsOf([ENDPOINTS[0]]))).toEqual([
      { service: "web", domain: "a.test", port: 8080 },
      { service: "web", domain: "www.a.test", port: 8080 },
    ]);
  });

  it("tells a change from the app's endpoints, whatever the order", () => {
    const rows = rowsOf(ENDPOINTS);
    expect(changed(rows, ENDPOINTS)).toBe(false);
    expect(changed([...rows].reverse(), ENDPOINTS)).toBe(false);
    expect(changed(rows.slice(1), ENDPOINTS)).toBe(true);
    expect(changed([...rows, newRow(APP)], ENDPOINTS)).toBe(true);
    expect(
      changed(
        rows.map((r, i) => (i === 0 ? { ...r, tls: "off" as const } : r)),
        ENDPOINTS,
      ),
    ).toBe(true);
    expect(changed([], [])).toBe(false);
  });
});
