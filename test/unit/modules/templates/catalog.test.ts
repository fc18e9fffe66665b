/**
 * Every template of the embedded catalog: well-formed, images pinned, a healthcheck on every service, only variables
 * it declares (and every one it declares used), secrets of at least 128 bits that differ between two deploys, and
 * through Sundeck's own safety rules unchanged with each routing mode; its rendered file is one docker-compose v1
 * reads without complaint.
 */
import { describe, expect, it } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { prepare } from "../../../../src/compose/prepare";
import { readTemplate, type Template } from "../../../../src/modules/templates/catalog";
import { TEMPLATE_FILES } from "../../../../src/modules/templates/catalog/index";
import { chooseRouting, withRouteLabels } from "../../../../src/modules/templates/routing";
import { lengthFor, MIN_SECRET_BITS, resolveVariables } from "../../../../src/modules/templates/variables";
import { composeV1, expectOnlyDeclaredVariables, expectPinnedAndChecked } from "../../../helpers/catalog-checks";
import { tempDir } from "../../../helpers/tmp";

const templates: Template[] = TEMPLATE_FILES.map(readTemplate);
const root = tempDir("sundeck-templates-");

/** Values a user could give: an email and domains each their own, the rest left to defaults and generation. */
const values = (t: Template): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const v of t.variables) {
    if (v.type === "email") out[v.key] = "admin@example.com";
    if (v.type === "domain") out[v.key] = `${v.key.toLowerCase().replace(/_/g, "-")}.example.com`;
    if (v.type === "number" && !v.default) out[v.key] = "1";
    if (v.type === "text" && v.required && !v.default) out[v.key] = "value";
  }
  return out;
};

const render = (t: Template, mode: "quick" | "domain" | "none") => {
  const slug = `${t.id}-app`.slice(0, 63);
  const routing = chooseRouting(slug, { mode, domain: `${t.id}.example.com` }, "203.0.113.7");
  const compose = t.web ? withRouteLabels(t.compose, t.web.service, t.web.port, routing) : t.compose;
  const { env } = resolveVariables(t.variables, values(t));
  const appDir = join(root, "apps", slug);
  mkdirSync(appDir, { recursive: true });
  const envText = Object.entries(env)
    .map(([k, v]) => `${k}=${v}`)
    .join("\n");
  return {
    slug,
    compose,
    env,
    p: prepare(compose, envText, { appDir, appsDir: join(root, "apps"), dataDir: join(root, "data"), allowedHostPaths: [] }),
  };
};

it("holds templates with ids of their own", () => {
  expect(templates.length).toBeGreaterThanOrEqual(40);
  expect(new Set(templates.map((t) => t.id)).size).toBe(templates.length);
});

describe.each(templates.map((t) => [t.id, t] as const))("template %s", (_id, t) => {
  it("pins every image to a tag that is not latest, and checks the health of every service", () => {
    const doc = prepare(t.compose.replace(/\$\{[A-Z0-9_]+\}/g, "x"), "", {
      appDir: join(root, "plain", t.id),
      appsDir: join(root, "plain"),
      dataDir: join(root, "data"),
      allowedHostPaths: [],
    }).project.doc;
    expectPinnedAndChecked(doc.services);
  });

  it("uses only the variables it declares, and every one of them", () => {
    expectOnlyDeclaredVariables(t.compose, t.variables);
  });

  it("generates secrets of at least 128 bits, different on every deploy", () => {
    for (const v of t.variables.filter((x) => x.type === "secret" && x.generate))
      expect(v.generate!.length).toBeGreaterThanOrEqual(lengthFor(MIN_SECRET_BITS, v.generate!.charset));
    const a = resolveVariables(t.variables, values(t));
    const b = resolveVariables(t.variables, values(t));
    for (const k of a.generated) expect(a.env[k]).not.toBe(b.env[k]);
    expect(a.generated.sort()).toEqual(
      t.variables
        .filter((v) => v.type === "secret")
        .map((v) => v.key)
        .sort(),
    );
  });

  it("names its web service and data service among its services", () => {
    if (t.web) expect(t.services).toContain(t.web.service);
    if (t.database) expect(t.services).toContain(t.database.service);
  });

  it.each(["quick", "domain", "none"] as const)("passes the safety rules unchanged, routed %s", (mode) => {
    const { p, slug } = render(t, mode);
    const hosts = p.labels.endpoints.flatMap((e) => e.hosts);
    if (mode === "none" || !t.web) expect(hosts).toEqual([]);
    else {
      expect(p.labels.endpoints).toHaveLength(1);
      expect(p.labels.endpoints[0]).toMatchObject({ service: t.web.service, port: t.web.port });
      expect(hosts).toEqual([mode === "quick" ? `${slug}.203.0.113.7.sslip.io` : `${t.id}.example.com`]);
      if (mode === "quick") expect(p.labels.endpoints[0].tls).toBe("local");
    }
  });

  it("renders a file docker-compose v1 reads", () => {
    const { p } = render(t, "quick");
    expect(composeV1(join(root, "v1", t.id), p.rendered)).toEqual({ code: 0, err: "" });
  });
});
