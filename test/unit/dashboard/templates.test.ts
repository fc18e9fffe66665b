import { describe, expect, test } from "bun:test";
import type { TemplateSummary } from "../../../src/dashboard/templates";
import {
  categoriesOf,
  filterTemplates,
  initialValues,
  routeUrl,
  routingBody,
  suggestSlug,
  templateUpdate,
  variableProblems,
} from "../../../src/dashboard/templates";

function tpl(over: Partial<TemplateSummary> & { id: string }): TemplateSummary {
  return {
    name: over.id,
    description: "",
    category: "web",
    tags: [],
    services: ["web"],
    variables: [],
    version: 1,
    icon: "<svg/>",
    web: { service: "web", port: 80 },
    database: null,
    ...over,
  };
}

const LIST = [
  tpl({ id: "gitea", name: "Gitea", description: "Self-hosted Git service", category: "dev tools", tags: ["git", "forge"] }),
  tpl({ id: "postgres", name: "PostgreSQL", description: "Relational database", category: "databases", tags: ["sql"] }),
  tpl({ id: "wikijs", name: "Wiki.js", description: "A wiki on Postgres", category: "productivity", tags: ["wiki"] }),
];

describe("filterTemplates", () => {
  test("every word must appear in the id, name, description, category or tags, any case", () => {
    expect(filterTemplates(LIST, "git", "").map((t) => t.id)).toEqual(["gitea"]);
    expect(filterTemplates(LIST, "POSTGRES", "").map((t) => t.id)).toEqual(["postgres", "wikijs"]);
    expect(filterTemplates(LIST, "wiki postgres", "").map((t) => t.id)).toEqual(["wikijs"]);
    expect(filterTemplates(LIST, "sql", "").map((t) => t.id)).toEqual(["postgres"]);
    expect(filterTemplates(LIST, "nothing-like-it", "")).toEqual([]);
  });
  test("a category narrows; an empty query keeps all of it", () => {
    expect(filterTemplates(LIST, "", "databases").map((t) => t.id)).toEqual(["postgres"]);
    expect(filterTemplates(LIST, "  ", "").length).toBe(3);
    expect(filterTemplates(LIST, "git", "databases")).toEqual([]);
  });
});

test("categoriesOf counts each category, in name order", () => {
  expect(categoriesOf([...LIST, tpl({ id: "mysql", category: "databases" })])).toEqual([
    { category: "databases", count: 2 },
    { category: "dev tools", count: 1 },
    { category: "productivity", count: 1 },
  ]);
});

test("suggestSlug takes the id, else the first free -N", () => {
  expect(suggestSlug("gitea", new Set())).toBe("gitea");
  expect(suggestSlug("gitea", new Set(["gitea", "gitea-2"]))).toBe("gitea-3");
});

describe("routing", () => {
  test("the body leaves the default TLS out and lower-cases the domain", () => {
    expect(routingBody({ mode: "quick", domain: "x", tls: "" })).toEqual({ mode: "quick" });
    expect(routingBody({ mode: "quick", domain: "", tls: "auto" })).toEqual({ mode: "quick", tls: "auto" });
    expect(routingBody({ mode: "domain", domain: " Git.Example.COM ", tls: "" })).toEqual({
      mode: "domain",
      domain: "git.example.com",
    });
    expect(routingBody({ mode: "none", domain: "a.b", tls: "off" })).toEqual({ mode: "none" });
  });
  test("the URL: quick under sslip.io with https (local CA), a domain with the server's mode, none has none", () => {
    expect(routeUrl("gitea", { mode: "quick", domain: "", tls: "" }, "203.0.113.7", "auto")).toBe(
      "https://gitea.203.0.113.7.sslip.io/",
    );
    expect(routeUrl("gitea", { mode: "quick", domain: "", tls: "" }, "example.com", "auto")).toBeNull();
    expect(routeUrl("gitea", { mode: "domain", domain: "git.example.com", tls: "off" }, "", "auto")).toBe(
      "http://git.example.com/",
    );
    expect(routeUrl("gitea", { mode: "domain", domain: "git.example.com", tls: "" }, "", "off")).toBe("http://git.example.com/");
    expect(routeUrl("gitea", { mode: "none", domain: "", tls: "" }, "203.0.113.7", "auto")).toBeNull();
  });
});

describe("variables", () => {
  const t = tpl({
    id: "x",
    variables: [
      { key: "ADMIN_EMAIL", label: "Admin email", type: "email", required: true, default: null, help: null },
      { key: "PORT_COUNT", label: "Workers", type: "number", required: false, default: "2", help: null },
      { key: "SITE", label: "Site name", type: "text", required: true, default: "My site", help: null },
      {
        key: "DB_PASSWORD",
        label: "DB password",
        type: "secret",
        required: true,
        default: null,
        help: null,
        generate: { length: 32, charset: "alphanum" },
      },
    ],
  });
  test("the form starts with the defaults and the secrets empty", () => {
    expect(initialValues(t)).toEqual({ ADMIN_EMAIL: "", PORT_COUNT: "2", SITE: "My site", DB_PASSWORD: "" });
  });
  test("a required value without a default is missing; an empty secret is not (the server makes it)", () => {
    const p = variableProblems(t, initialValues(t));
    expect([...p.keys()]).toEqual(["ADMIN_EMAIL"]);
    expect(p.get("ADMIN_EMAIL")).toBe("Admin email is required");
  });
  test("numbers and emails are checked when given", () => {
    const p = variableProblems(t, { ADMIN_EMAIL: "not-an-email", PORT_COUNT: "two", SITE: "s", DB_PASSWORD: "" });
    expect(p.get("ADMIN_EMAIL")).toBe("Admin email must be an email address");
    expect(p.get("PORT_COUNT")).toBe("Workers must be a number");
    expect(variableProblems(t, { ADMIN_EMAIL: "a@b.co", PORT_COUNT: "4", SITE: "s", DB_PASSWORD: "" }).size).toBe(0);
  });
});

describe("templateUpdate", () => {
  test("newer when the catalog's version is higher, gone when it is missing, else nothing to say", () => {
    const list = [tpl({ id: "gitea", version: 3 })];
    expect(templateUpdate({ id: "gitea", version: 2 }, list)).toMatchObject({ kind: "newer", from: 2 });
    expect(templateUpdate({ id: "gitea", version: 3 }, list)).toEqual({ kind: "current" });
    expect(templateUpdate({ id: "old", version: 1 }, list)).toEqual({ kind: "gone", id: "old" });
    expect(templateUpdate(null, list)).toEqual({ kind: "current" });
  });
});
