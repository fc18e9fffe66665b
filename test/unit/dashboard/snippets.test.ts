import { expect, test } from "bun:test";
import { parse } from "yaml";
import { applySnippet, type SnippetWithValues } from "../../../src/dashboard/snippets";

const REDIS: SnippetWithValues = {
  id: "redis",
  name: "Redis",
  description: "",
  category: "databases",
  icon: "<svg/>",
  services: ["redis"],
  volumes: ["redis-data"],
  variables: [],
  notes: "",
  compose: `services:
  redis:
    image: redis:7.4.1-alpine
    command: ["redis-server", "--requirepass", "\${REDIS_PASSWORD}"]
    volumes:
      - redis-data:/data
volumes:
  redis-data:
`,
  env: { REDIS_PASSWORD: "generated-value-1234567890abcdef", REDIS_DB: "0" },
};

test("the snippet's service and volume join the file; variables the .env lacks are returned, the rest kept", () => {
  const app = "# my app\nservices:\n  web:\n    image: sundeck-test/web:latest\n";
  const r = applySnippet(app, REDIS, new Set(["REDIS_DB"]));
  const doc = parse(r.text);
  expect(Object.keys(doc.services)).toEqual(["web", "redis"]);
  expect(Object.keys(doc.volumes)).toEqual(["redis-data"]);
  expect(r.text.startsWith("# my app\n")).toBe(true);
  expect(r.env).toEqual({ REDIS_PASSWORD: "generated-value-1234567890abcdef" });
  expect(r.message).toBe(
    'Added Redis: service "redis", volume "redis-data". New variables: REDIS_PASSWORD. Already set, kept: REDIS_DB.',
  );
});

test("a second insert of the same snippet gets new names, and says so", () => {
  const once = applySnippet("", REDIS, new Set());
  const twice = applySnippet(once.text, REDIS, new Set(Object.keys(once.env)));
  expect(Object.keys(parse(twice.text).services)).toEqual(["redis", "redis-2"]);
  expect(twice.env).toEqual({});
  expect(twice.message).toContain("Renamed to avoid a clash: redis as redis-2.");
});

test("a text that is not a compose file is an error, and nothing is returned", () => {
  expect(() => applySnippet("services: [\n", REDIS, new Set())).toThrow();
});
