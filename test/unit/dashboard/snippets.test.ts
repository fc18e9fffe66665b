import { expect, test } from "bun:test";
import { parse } from "yaml";
import { applySnippet, type SnippetWithValues } from "../../../src/dashboard/snippets";
import { renameVariables } from "../../../src/shared/insert-snippet";

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

test("a second insert of the same snippet gets new names and variables of its own, and says so", () => {
  const once = applySnippet("", REDIS, new Set());
  const second = { ...REDIS, env: { REDIS_PASSWORD: "another-generated-value" } };
  const twice = applySnippet(once.text, second, new Set(Object.keys(once.env)));
  const doc = parse(twice.text);
  expect(Object.keys(doc.services)).toEqual(["redis", "redis-2"]);
  expect(Object.keys(doc.volumes)).toEqual(["redis-data", "redis-data-2"]);
  // the first copy keeps its password, the second has its own
  expect(doc.services.redis.command).toEqual(["redis-server", "--requirepass", `\${REDIS_PASSWORD}`]);
  expect(doc.services["redis-2"].command).toEqual(["redis-server", "--requirepass", `\${REDIS_PASSWORD_2}`]);
  expect(twice.env).toEqual({ REDIS_PASSWORD_2: "another-generated-value" });
  expect(twice.message).toContain("Renamed to avoid a clash: redis as redis-2.");
  expect(twice.message).toContain("Its own variables: REDIS_PASSWORD as REDIS_PASSWORD_2.");
  // a third copy takes the next free names
  const keys = new Set([...Object.keys(once.env), ...Object.keys(twice.env)]);
  const thrice = applySnippet(twice.text, second, keys);
  expect(thrice.env).toEqual({ REDIS_PASSWORD_3: "another-generated-value" });
});

test("renameVariables rewrites compose's interpolations and leaves the container's own $$ variables", () => {
  const text = `a: \${PW}\nb: \${PW:-x} \${PW-y} \${PW:?e} $PW $$PW \${PWD} $PWX "$$$PW"\n`;
  expect(renameVariables(text, { PW: "PW_2" })).toBe(
    `a: \${PW_2}\nb: \${PW_2:-x} \${PW_2-y} \${PW_2:?e} $PW_2 $$PW \${PWD} $PWX "$$$PW_2"\n`,
  );
});

test("a text that is not a compose file is an error, and nothing is returned", () => {
  expect(() => applySnippet("services: [\n", REDIS, new Set())).toThrow();
});
