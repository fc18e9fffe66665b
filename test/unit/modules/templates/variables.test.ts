import { describe, expect, it } from "bun:test";
import { chooseRouting, quickHost, withRouteLabels } from "../../../../src/modules/templates/routing";
import { generateSecret, lengthFor, resolveVariables } from "../../../../src/modules/templates/variables";
import type { TemplateVariable } from "../../../../src/shared/templates";

const v = (key: string, type: TemplateVariable["type"], o: Partial<TemplateVariable> = {}): TemplateVariable => ({
  key,
  label: key.toLowerCase(),
  type,
  required: true,
  default: null,
  help: null,
  ...o,
});

describe("secrets", () => {
  it("are drawn from their charset only, at the length asked or enough for 128 bits", () => {
    expect(generateSecret(32, "hex")).toMatch(/^[0-9a-f]{32}$/);
    expect(generateSecret(8, "hex")).toHaveLength(lengthFor(128, "hex"));
    expect(lengthFor(128, "alphanum")).toBe(22);
    expect(generateSecret(40, "base58")).toMatch(/^[1-9A-HJ-NP-Za-km-z]{40}$/);
  });

  it("use every character of the alphabet about evenly (no modulo bias)", () => {
    const counts = new Map<string, number>();
    for (const c of generateSecret(62 * 400, "alphanum")) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    for (const n of counts.values()) expect(n).toBeGreaterThan(280);
  });
});

describe("variables", () => {
  it("fill defaults, generate empty secrets and keep given ones", () => {
    const r = resolveVariables(
      [v("NAME", "text", { default: "app" }), v("PASS", "secret"), v("OWN", "secret"), v("OPT", "text", { required: false })],
      { OWN: "given-secret" },
    );
    expect(r.env.NAME).toBe("app");
    expect(r.env.PASS).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(r.env.OWN).toBe("given-secret");
    expect(r.env.OPT).toBe("");
    expect(r.generated).toEqual(["PASS"]);
  });

  it("name every problem in one 400: unknown, missing, bad types, one host for two domains, line breaks", () => {
    let err: any;
    try {
      resolveVariables([v("A", "domain"), v("B", "domain"), v("M", "email"), v("N", "number"), v("T", "text"), v("R", "text")], {
        A: "Shop.Example.com",
        B: "shop.example.com",
        M: "x",
        N: "1e9",
        T: "a\nb",
        Z: "?",
      });
    } catch (e) {
      err = e;
    }
    expect(err?.status).toBe(400);
    expect(err.reason).toBe(
      "template variables: Z is not a variable of this template; B is the same host as A: each domain needs its own; " +
        "M must be an email address; N must be a number; T must be one line of printable text of at most 4096 characters; " +
        "R (r) is required",
    );
  });
});

describe("routing", () => {
  it("puts a quick test under sslip.io, IPv6 with dashes, and needs an IP", () => {
    expect(quickHost("blog", "203.0.113.7")).toBe("blog.203.0.113.7.sslip.io");
    expect(quickHost("blog", "2001:db8::1")).toBe("blog.2001-db8--1.sslip.io");
    expect(() => quickHost("blog", "example.com")).toThrow(/public_host to be this server's public IP address/);
    expect(() => quickHost("blog", "")).toThrow(/it is not set/);
    expect(chooseRouting("blog", { mode: "quick", tls: "off" }, "203.0.113.7")).toEqual({
      mode: "quick",
      host: "blog.203.0.113.7.sslip.io",
      tls: "off",
    });
    expect(() => chooseRouting("blog", { mode: "domain", domain: "not a host" }, "")).toThrow(/routing.domain must be a host/);
    expect(() => chooseRouting("blog", { mode: "quick", tls: "maybe" }, "203.0.113.7")).toThrow(/routing.tls must be one of/);
  });

  it("writes the labels on the web service, keeping the rest of the file", () => {
    const text = "services:\n  # the site\n  web:\n    image: a:1\n    labels:\n      other: x\n  db:\n    image: b:1\n";
    const out = withRouteLabels(text, "web", 8080, { mode: "domain", host: "a.example.com", tls: null });
    expect(out).toBe(
      'services:\n  # the site\n  web:\n    image: a:1\n    labels:\n      other: x\n      sundeck.domain: a.example.com\n      sundeck.port: "8080"\n  db:\n    image: b:1\n',
    );
    expect(withRouteLabels(text, "web", 80, { mode: "none", host: null, tls: null })).toBe(text);
  });
});
