/**
 * Every service snippet: well-formed (Bun's YAML reader, the bundler's at build time, reads it and every catalog file
 * as the yaml package does, and the compose names read from the lines are the YAML keys),
 * images pinned (to the tag the template catalog uses for the same image), a healthcheck on every service, only the
 * variables it declares (and every one), secrets of at least 128 bits; inserted into a small app it passes Sundeck's
 * own safety rules and renders a file docker-compose v1 reads. Then the routes: who may read them, the list and
 * detail shapes, and the generated .env values.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { formatEnvFile } from "../../../../src/compose/envfile";
import { prepare } from "../../../../src/compose/prepare";
import { readTemplate } from "../../../../src/modules/templates/catalog";
import { TEMPLATE_FILES } from "../../../../src/modules/templates/catalog/index";
import { composeNames, readYaml } from "../../../../src/modules/templates/file-schema";
import { readSnippet, type Snippet, snippetEnv } from "../../../../src/modules/templates/snippets";
import { SNIPPET_FILES } from "../../../../src/modules/templates/snippets/index";
import { lengthFor, MIN_SECRET_BITS } from "../../../../src/modules/templates/variables";
import { insertSnippet } from "../../../../src/shared/insert-snippet";
import { composeV1, expectOnlyDeclaredVariables, expectPinnedAndChecked } from "../../../helpers/catalog-checks";
import type { Client } from "../../../helpers/http";
import { startTestServer, type TestServer } from "../../../helpers/server";
import { tempDir } from "../../../helpers/tmp";

const all: Snippet[] = SNIPPET_FILES.map(readSnippet);
const root = tempDir("sundeck-snippets-");
const APP = "services:\n  web:\n    image: nginx:1.27.3-alpine\n";

const prepared = (s: Snippet, compose: string, env: Record<string, string>) => {
  const appDir = join(root, "apps", s.id);
  mkdirSync(appDir, { recursive: true });
  return prepare(compose, formatEnvFile(env), {
    appDir,
    appsDir: join(root, "apps"),
    dataDir: join(root, "data"),
    allowedHostPaths: [],
  });
};

const imageTags = (compose: string) =>
  [...compose.matchAll(/^\s+image:\s*(\S+)$/gm)].map((m) => {
    const at = m[1].lastIndexOf(":");
    return [m[1].slice(0, at), m[1].slice(at + 1)] as const;
  });

it("holds the issue's snippets, with ids of their own", () => {
  const ids = all.map((s) => s.id);
  for (const id of ["postgres", "mysql", "mariadb", "mongodb", "redis", "valkey", "memcached", "clickhouse", "rabbitmq"])
    expect(ids).toContain(id);
  for (const id of ["nats", "minio", "meilisearch"]) expect(ids).toContain(id);
  expect(new Set(ids).size).toBe(ids.length);
});

it("reads every catalog and snippet file, and its compose text's names, as the yaml package does", () => {
  const dir = (d: string) => join(import.meta.dir, "../../../../src/modules/templates", d);
  const files = (d: string) =>
    readdirSync(dir(d))
      .filter((f) => f.endsWith(".yml"))
      .map((f) => readFileSync(join(dir(d), f), "utf8"));
  for (const [d, imported] of [
    ["catalog", TEMPLATE_FILES],
    ["snippets", SNIPPET_FILES],
  ] as const) {
    // every file is in its index, and what Bun's reader made of it (the import's data) is what the yaml package reads
    const data = new Map(imported.map((x) => [(x as { id: string }).id, x]));
    const texts = files(d);
    expect(data.size).toBe(texts.length);
    for (const text of texts) {
      const doc = parse(text);
      expect(data.get(doc.id)).toEqual(doc);
      expect(readYaml(text)).toEqual(doc);
      // the names read from the compose text's lines are the keys a YAML reader finds, in order
      const compose = parse(doc.compose);
      expect(composeNames(doc.compose)).toEqual({
        services: Object.keys(compose.services ?? {}),
        volumes: Object.keys(compose.volumes ?? {}),
      });
    }
  }
});

it("reads compose names from a file's lines: nested keys, comments, flow values and other sections aside", () => {
  const text = `# a note
services:
  web:
    image: x
    volumes:
      - data:/d
  # a comment
  db: # the database
    image: y
  cache: { image: z }
networks:
  front:
volumes:
  data:
  db-data: {}
x-extra:
  ignored:
`;
  expect(composeNames(text)).toEqual({ services: ["web", "db", "cache"], volumes: ["data", "db-data"] });
});

it("pins each image to the tag the template catalog uses for it", () => {
  const catalogTags = new Map<string, Set<string>>();
  for (const t of TEMPLATE_FILES.map(readTemplate))
    for (const [repo, tag] of imageTags(t.compose)) catalogTags.set(repo, (catalogTags.get(repo) ?? new Set()).add(tag));
  for (const s of all)
    for (const [repo, tag] of imageTags(s.compose))
      if (catalogTags.has(repo))
        expect({ snippet: s.id, repo, tags: [...catalogTags.get(repo)!] }).toEqual({ snippet: s.id, repo, tags: [tag] });
});

describe.each(all.map((s) => [s.id, s] as const))("snippet %s", (_id, s) => {
  it("pins every image to a tag that is not latest, and checks the health of every service", () => {
    const doc = prepared(s, s.compose.replace(/\$\{[A-Z0-9_]+\}/g, "x"), {}).project.doc;
    expect(Object.keys(doc.services)).toEqual(s.services);
    expectPinnedAndChecked(doc.services);
  });

  it("uses only the variables it declares, and every one of them, with no literal password", () => {
    expectOnlyDeclaredVariables(s.compose, s.variables);
  });

  it("generates secrets of at least 128 bits, different every time", () => {
    for (const v of s.variables.filter((x) => x.type === "secret")) {
      expect(v.generate).toBeDefined();
      expect(v.generate!.length).toBeGreaterThanOrEqual(lengthFor(MIN_SECRET_BITS, v.generate!.charset));
    }
    const a = snippetEnv(s);
    const b = snippetEnv(s);
    for (const v of s.variables) {
      if (v.type === "secret") expect(a[v.key]).not.toBe(b[v.key]);
      else expect(a[v.key]).toBe(v.default ?? "");
    }
  });

  it("inserted into an app, passes the safety rules and renders a file docker-compose v1 reads", () => {
    const { text, added } = insertSnippet(APP, s.compose);
    expect(added.services).toEqual(s.services);
    const p = prepared(s, text, snippetEnv(s));
    expect(Object.keys(p.project.doc.services)).toEqual(["web", ...s.services]);
    expect(p.project.missingVars ?? []).toEqual([]);
    expect(composeV1(join(root, "v1", s.id), p.rendered)).toEqual({ code: 0, err: "" });
  });
});

describe("GET /api/snippets", () => {
  let s: TestServer;
  let viewer: Client;
  beforeAll(async () => {
    s = await startTestServer();
    viewer = await s.user("vic", "viewer");
  });
  afterAll(() => s?.stop());

  it.each([
    ["anonymous: 401", () => s.anon, 401],
    ["a viewer: 200", () => viewer, 200],
    ["the super-admin: 200", () => s.root, 200],
  ] as const)("answers %s", async (_who, client, status) => {
    expect((await client().get("/api/snippets")).status).toBe(status);
    expect((await client().get("/api/snippets/postgres")).status).toBe(status);
  });

  it("lists every snippet without its compose text, and shows one with it", async () => {
    const list = (await viewer.get("/api/snippets")).json;
    expect(list.map((x: any) => x.id).sort()).toEqual(all.map((x) => x.id).sort());
    const pg = list.find((x: any) => x.id === "postgres");
    expect(Object.keys(pg).sort()).toEqual(["category", "description", "icon", "id", "name", "services", "variables", "volumes"]);
    expect(pg).toMatchObject({ services: ["postgres"], volumes: ["postgres-data"], category: "databases" });
    const one = (await viewer.get("/api/snippets/postgres")).json;
    expect(one.compose).toContain("image: postgres:");
    expect(one.notes).toContain("postgres:5432");
    expect(one.env).toBeUndefined();
    expect((await viewer.get("/api/snippets/nope")).status).toBe(404);
  });

  it("offers .env values on request: secrets generated anew, the rest their defaults", async () => {
    const a = (await viewer.get("/api/snippets/postgres?generate=true")).json.env;
    const b = (await viewer.get("/api/snippets/postgres?generate=true")).json.env;
    expect(a.POSTGRES_USER).toBe("app");
    expect(a.POSTGRES_DB).toBe("app");
    expect(a.POSTGRES_PASSWORD).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(b.POSTGRES_PASSWORD).not.toBe(a.POSTGRES_PASSWORD);
  });
});
