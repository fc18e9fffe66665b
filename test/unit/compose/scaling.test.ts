/** Which services may scale: ports, volumes, container names and stateful images refuse, sundeck.scalable overrides. */
import { describe, expect, it } from "bun:test";
import { parseCompose } from "../../../src/compose/parse";
import { imageBasename, scalability, statefulImage } from "../../../src/compose/scaling";

const service = (body: string) => parseCompose(`services:\n  web:\n${body}`, {}).services[0];

describe("scalability", () => {
  it("allows a stateless service", () => {
    expect(scalability(service("    image: ghcr.io/example/api:2\n"))).toEqual({ ok: true });
  });

  it("allows ephemeral host ports, anonymous volumes, tmpfs and binds", () => {
    expect(
      scalability(service("    image: nginx\n    ports: ['80', '127.0.0.1::81']\n    volumes: [/cache, ./static:/static]\n")),
    ).toEqual({
      ok: true,
    });
  });

  it.each([
    ["    image: nginx\n    ports: ['8080:80']\n", "publishes host port 8080"],
    ["    image: nginx\n    ports: [{target: 53, published: 5353, protocol: udp}]\n", "publishes host port 5353/udp"],
    ["    image: nginx\n    ports: ['9000-9001:80-81']\n", "publishes host port 9000-9001"],
    ["    image: nginx\n    volumes: ['data:/data']\n", "mounts named volume data"],
    ["    image: postgres:16\n", "runs postgres:16, a stateful postgres image"],
    ["    image: docker.io/library/redis:7-alpine\n", "runs docker.io/library/redis:7-alpine, a stateful redis image"],
    ["    image: nginx\n    container_name: fixed\n", "sets container_name fixed"],
    ["    image: nginx\n    labels: {sundeck.scalable: 'false'}\n", "its sundeck.scalable label is false"],
  ])("refuses %j with a reason", (body, reason) => {
    expect(scalability(service(body))).toEqual({ ok: false, reason });
  });

  it("lets sundeck.scalable: true override ports, volumes and stateful images", () => {
    const s = service(
      "    image: redis:7\n    ports: ['6379:6379']\n    volumes: ['data:/data']\n    labels: {sundeck.scalable: 'true'}\n",
    );
    expect(scalability(s)).toEqual({ ok: true });
  });

  it("still refuses a fixed container name when labelled scalable", () => {
    const s = service("    image: nginx\n    container_name: one\n    labels: {sundeck.scalable: 'true'}\n");
    expect(scalability(s).ok).toBe(false);
  });
});

describe("stateful images", () => {
  it.each([
    ["postgres", "postgres"],
    ["postgres:16-alpine", "postgres"],
    ["bitnami/postgresql:15", "postgres"],
    ["ghcr.io/org/mysql:8@sha256:abcd", "mysql"],
    ["mariadb", "mariadb"],
    ["mongo:7", "mongo"],
    ["bitnami/mongodb", "mongo"],
    ["valkey/valkey:8", "valkey"],
    ["redis/redis-stack-server", "redis"],
    ["docker.elastic.co/elasticsearch/elasticsearch:8.14.0", "elasticsearch"],
    ["opensearchproject/opensearch:2", "opensearch"],
    ["rabbitmq:3-management", "rabbitmq"],
    ["clickhouse/clickhouse-server", "clickhouse"],
    ["cassandra", "cassandra"],
    ["couchdb", "couchdb"],
    ["influxdb:2", "influxdb"],
    ["quay.io/coreos/etcd:v3.5", "etcd"],
    ["zookeeper", "zookeeper"],
    ["confluentinc/cp-kafka:7.6", "kafka"],
    ["localhost:5000/minio/minio", "minio"],
    ["REDIS", "redis"],
  ])("sees %s as %s", (image, family) => {
    expect(statefulImage(image)).toBe(family);
  });

  it.each(["nginx", "redisinsight", "node:20", "localhost:5000/app", "traefik"])("does not see %s as stateful", (image) => {
    expect(statefulImage(image)).toBeNull();
  });

  it("matches a stateful word anywhere in a dashed name, which sundeck.scalable can override", () => {
    expect(statefulImage("mongo-express")).toBe("mongo");
  });

  it("takes the repository basename without registry, port, tag or digest", () => {
    expect(imageBasename("registry.example.com:5000/team/api:1.2@sha256:ff")).toBe("api");
    expect(imageBasename("api")).toBe("api");
  });
});
