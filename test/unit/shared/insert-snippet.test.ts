/**
 * insertSnippet: a snippet's services and volumes merged into an app's compose text, into an empty one too; names the
 * file already uses get a free suffix with the snippet's references to them rewritten; the file's comments stay; what
 * it writes docker-compose v1 reads.
 */
import { describe, expect, it } from "bun:test";
import { join } from "node:path";
import { parse } from "yaml";
import { insertSnippet } from "../../../src/shared/insert-snippet";
import { composeV1 } from "../../helpers/catalog-checks";
import { tempDir } from "../../helpers/tmp";

const root = tempDir("sundeck-insert-");

const DB = `services:
  db:
    image: postgres:16.6-alpine
    environment:
      POSTGRES_PASSWORD: \${DB_PASSWORD}
    volumes:
      - db-data:/var/lib/postgresql/data
volumes:
  db-data:
`;

/** Two services that refer to each other and to their volumes every way compose allows. */
const PAIR = `services:
  db:
    image: postgres:16.6-alpine
    volumes:
      - db-data:/var/lib/postgresql/data:rw
      - type: volume
        source: db-run
        target: /run/postgresql
  tool:
    image: adminer:4.8.1
    depends_on:
      db:
        condition: service_healthy
    links: ["db:database"]
    volumes_from: ["db:ro"]
  side:
    image: busybox:1.37.0
    network_mode: service:db
    depends_on: [db, tool]
volumes:
  db-data:
  db-run: {}
`;

const APP = `# the shop
services:
  web: # the storefront
    image: nginx:1.27.3-alpine
    depends_on: [db]
  # its own database
  db:
    image: mysql:8.4.3
volumes:
  db-data: {} # mysql's
`;

describe("insertSnippet", () => {
  it.each([
    ["empty", ""],
    ["blank", "\n  \n"],
    ["only a comment", "# to fill in\n"],
    ["with no services yet", "services:\n"],
  ])("fills a file that is %s", (_what, text) => {
    const r = insertSnippet(text, DB);
    expect(parse(r.text)).toEqual(parse(DB));
    expect(r.added).toEqual({ services: ["db"], volumes: ["db-data"] });
    expect(r.renamed).toEqual({ services: {}, volumes: {} });
    if (text.includes("#")) expect(r.text).toStartWith("# to fill in\n");
    expect(composeV1(join(root, `empty-${text.length}`), r.text, "DB_PASSWORD=x\n")).toEqual({ code: 0, err: "" });
  });

  it("adds after the services and volumes the file has, leaving those as they were", () => {
    const app = "services:\n  web:\n    image: nginx:1.27.3-alpine\nvolumes:\n  web-data:\n";
    const r = insertSnippet(app, DB);
    const doc = parse(r.text);
    expect(Object.keys(doc.services)).toEqual(["web", "db"]);
    expect(doc.services.web).toEqual({ image: "nginx:1.27.3-alpine" });
    expect(Object.keys(doc.volumes)).toEqual(["web-data", "db-data"]);
    expect(r.text).toStartWith(app.slice(0, app.indexOf("volumes:")));
    expect(r.added).toEqual({ services: ["db"], volumes: ["db-data"] });
  });

  it("renames a service or volume the file already has, and the snippet's references to it", () => {
    const r = insertSnippet(APP, PAIR);
    expect(r.renamed).toEqual({ services: { db: "db-2" }, volumes: { "db-data": "db-data-2" } });
    expect(r.added).toEqual({ services: ["db-2", "tool", "side"], volumes: ["db-data-2", "db-run"] });
    const doc = parse(r.text);
    expect(doc.services.db).toEqual({ image: "mysql:8.4.3" });
    expect(doc.services.web.depends_on).toEqual(["db"]);
    expect(doc.services["db-2"].volumes).toEqual([
      "db-data-2:/var/lib/postgresql/data:rw",
      { type: "volume", source: "db-run", target: "/run/postgresql" },
    ]);
    expect(doc.services.tool).toMatchObject({
      depends_on: { "db-2": { condition: "service_healthy" } },
      links: ["db-2:database"],
      volumes_from: ["db-2:ro"],
    });
    expect(doc.services.side).toMatchObject({ network_mode: "service:db-2", depends_on: ["db-2", "tool"] });
    expect(Object.keys(doc.volumes)).toEqual(["db-data", "db-data-2", "db-run"]);
    expect(composeV1(join(root, "clash"), r.text, "DB_PASSWORD=x\n")).toEqual({ code: 0, err: "" });
  });

  it("takes the next free suffix, so the same snippet goes in twice", () => {
    const once = insertSnippet("services:\n  db-2:\n    image: busybox:1.37.0\n", DB);
    const twice = insertSnippet(once.text, DB);
    expect(twice.added).toEqual({ services: ["db-3"], volumes: ["db-data-2"] });
    expect(Object.keys(parse(twice.text).services)).toEqual(["db-2", "db", "db-3"]);
  });

  it("gives the main service the name asked for, renamed too when that name is taken", () => {
    const r = insertSnippet("", PAIR, { serviceName: "pg" });
    expect(r.renamed.services).toEqual({ db: "pg" });
    expect(parse(r.text).services.tool.links).toEqual(["pg:database"]);
    const taken = insertSnippet("services:\n  pg:\n    image: busybox:1.37.0\n", DB, { serviceName: "pg" });
    expect(taken.added.services).toEqual(["pg-2"]);
    expect(() => insertSnippet("", DB, { serviceName: "-bad name" })).toThrow('service name "-bad name" is not valid');
  });

  it("keeps the file's comments, layout and quoting", () => {
    const app =
      '# the shop\nservices:\n    web: # the storefront\n        image: "nginx:1.27.3-alpine"\n        command: [nginx, -g, "daemon off;"]\n    # later: a cache\n';
    const r = insertSnippet(app, DB);
    for (const kept of [
      "# the shop",
      "# the storefront",
      "# later: a cache",
      '"nginx:1.27.3-alpine"',
      '[nginx, -g, "daemon off;"]',
    ])
      expect(r.text).toContain(kept);
    expect(r.text).toContain("\n    db:\n        image: postgres:16.6-alpine\n");
    expect(composeV1(join(root, "comments"), r.text, "DB_PASSWORD=x\n")).toEqual({ code: 0, err: "" });
  });

  it("writes a flow-style empty mapping of the file out as a block", () => {
    const r = insertSnippet("services: {}\nvolumes: {}\n", DB);
    expect(r.text).toBe(DB);
  });

  it.each([
    ["a file that is not YAML", "services: [", DB, "the compose file is not valid YAML"],
    ["a file that is a list", "- a\n", DB, "the compose file is not a mapping"],
    ["services that are not a mapping", "services: [web]\n", DB, "the compose file: services is not a mapping"],
    ["a file with a key twice", "services:\nservices:\n", DB, "the compose file is not valid YAML"],
    ["a snippet with no services", "", "volumes:\n  v:\n", "the snippet has no services"],
  ])("refuses %s", (_what, text, snippet, message) => {
    expect(() => insertSnippet(text, snippet)).toThrow(message);
  });
});
