/**
 * Strategy detection (label, image, ports, volumes, every service) and the strategies' tar plumbing (renaming entries
 * with pax long names, read back by GNU tar; the redis EOF mark trim).
 */
import { describe, expect, it } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { detectStrategies, factsFromContainers, type ServiceFacts } from "../../../../src/modules/backups/strategies";
import { imageName } from "../../../../src/modules/backups/strategies/detect";
import { dropEofMark } from "../../../../src/modules/backups/strategies/redis";
import { END_OF_ARCHIVE, entryHeader, padding, readTar, streamOf } from "../../../../src/modules/backups/strategies/tar";
import { mountKey } from "../../../../src/modules/backups/strategies/volume";
import { tempDir } from "../../../helpers/tmp";

const svc = (service: string, o: Partial<ServiceFacts> = {}): ServiceFacts => ({
  service,
  image: null,
  labels: {},
  ports: [],
  namedVolumes: [],
  ...o,
});

describe("detectStrategies", () => {
  it("finds every database service by image name, registry and tag aside", () => {
    const found = detectStrategies([
      svc("db", { image: "postgres:16-alpine" }),
      svc("geo", { image: "docker.io/postgis/postgis:15-3.4" }),
      svc("ts", { image: "timescale/timescaledb:latest-pg16" }),
      svc("my", { image: "mysql:8" }),
      svc("maria", { image: "mariadb:11" }),
      svc("percona", { image: "percona:8" }),
      svc("cache", { image: "redis:7" }),
      svc("valkey", { image: "valkey/valkey:8" }),
      svc("keydb", { image: "eqalpha/keydb" }),
      svc("bitnami", { image: "bitnami/postgresql:16" }),
      svc("web", { image: "nginx:1" }),
    ]);
    expect(found.map((d) => `${d.service}:${d.strategy}`)).toEqual([
      "db:postgres",
      "geo:postgres",
      "ts:postgres",
      "my:mysql",
      "maria:mysql",
      "percona:mysql",
      "cache:redis",
      "valkey:redis",
      "keydb:redis",
      "bitnami:postgres",
    ]);
    expect(found[0].reason).toBe("image postgres:16-alpine");
  });

  it("falls back to the port, and offers volume for named volumes besides", () => {
    const found = detectStrategies([
      svc("custom", { image: "acme/db", ports: [5432], namedVolumes: ["pgdata"] }),
      svc("kv", { image: "acme/kv", ports: [6379] }),
      svc("files", { image: "acme/app", namedVolumes: ["uploads", "cache"] }),
    ]);
    expect(found).toEqual([
      { service: "custom", strategy: "postgres", reason: "port 5432" },
      { service: "custom", strategy: "volume", reason: "named volumes pgdata" },
      { service: "kv", strategy: "redis", reason: "port 6379" },
      { service: "files", strategy: "volume", reason: "named volumes uploads, cache" },
    ]);
  });

  it("lets the label override, list several, or say none", () => {
    const found = detectStrategies([
      svc("db", { image: "postgres", labels: { "sundeck.backup.strategy": "none" }, namedVolumes: ["x"] }),
      svc("app", { image: "acme/app", labels: { "sundeck.backup.strategy": "sqlite, volume" }, namedVolumes: ["d"] }),
      svc("odd", { image: "redis", labels: { "sundeck.backup.strategy": "volume" } }),
    ]);
    expect(found.map((d) => `${d.service}:${d.strategy}`)).toEqual(["app:sqlite", "app:volume", "odd:volume"]);
  });

  it("reads the engine's view of running services (one entry per service)", () => {
    const base = { state: "running", status: "", health: null, project: "p", number: 1, networks: {}, createdAt: 0 };
    const facts = factsFromContainers(
      [
        {
          ...base,
          id: "a",
          name: "p-db-1",
          image: "postgres:16",
          labels: {},
          service: "db",
          ports: [{ privatePort: 5432, type: "tcp" }],
        },
        { ...base, id: "b", name: "p-db-2", image: "postgres:16", labels: {}, service: "db", ports: [] },
      ],
      { a: { Config: { Image: "postgres:16" }, Mounts: [{ Type: "volume", Name: "p_pgdata" }, { Type: "bind" }] } },
    );
    expect(facts).toEqual([{ service: "db", image: "postgres:16", labels: {}, ports: [5432], namedVolumes: ["p_pgdata"] }]);
  });

  it("names images by their last path component", () => {
    expect(imageName("registry.example:5000/team/postgres:16@sha256:abc")).toBe("postgres");
    expect(mountKey("/var/lib/postgresql/data/")).toBe("var_lib_postgresql_data");
  });
});

describe("strategy tar plumbing", () => {
  it("renames entries, long names through pax, and GNU tar reads the result", async () => {
    const dir = tempDir("sundeck-tar-");
    const long = `${"a".repeat(70)}/${"b".repeat(90)}.txt`;
    const src = join(dir, "src");
    Bun.spawnSync(["mkdir", "-p", join(src, "a".repeat(70))]);
    writeFileSync(join(src, long), "long name body\n");
    writeFileSync(join(src, "short.txt"), "x".repeat(1000));
    const tarFile = join(dir, "in.tar");
    expect(Bun.spawnSync(["tar", "--format=pax", "-C", dir, "-cf", tarFile, "src"]).exitCode).toBe(0);

    async function* rewritten(): AsyncGenerator<Uint8Array> {
      const parts: Uint8Array[] = [];
      await readTar(Bun.file(tarFile).stream(), async (e, body) => {
        parts.push(entryHeader(e, e.name.replace(/^src/, "renamed"), e.linkname));
        for await (const c of body) parts.push(c);
        if (e.type === "0") parts.push(new Uint8Array(padding(e.size)));
      });
      yield* parts;
      yield END_OF_ARCHIVE;
    }
    const out = join(dir, "out.tar");
    await Bun.write(out, new Response(streamOf(rewritten())));
    const list = Bun.spawnSync(["tar", "-tf", out]).stdout.toString().split("\n").filter(Boolean);
    expect(list).toContain(`renamed/${long}`);
    expect(list).toContain("renamed/short.txt");
    Bun.spawnSync(["tar", "-C", dir, "-xf", out]);
    expect(readFileSync(join(dir, "renamed", long), "utf8")).toBe("long name body\n");
  });

  it("drops the EOF mark redis-cli --rdb - leaves after the RDB, and nothing else", async () => {
    const rdb = new Uint8Array([...Buffer.from("REDIS0010"), 0xfe, 0, 0xff, 1, 2, 3, 4, 5, 6, 7, 8]);
    const mark = Buffer.from("0123456789abcdef0123456789abcdef01234567");
    const run = async (bytes: Uint8Array<ArrayBuffer>) =>
      new Uint8Array(await new Response(new Response(bytes).body!.pipeThrough(dropEofMark())).arrayBuffer());
    expect(await run(new Uint8Array([...rdb, ...mark]))).toEqual(rdb);
    expect(await run(rdb)).toEqual(rdb);
  });
});
