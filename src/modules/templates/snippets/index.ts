/**
 * Service snippets, embedded in the binary: one YAML file each (id, name, description, category, icon, variables,
 * notes, compose). Imported on first use only (snippets.ts). Add a file here and to the list;
 * test/unit/modules/templates/snippets.test.ts holds every one.
 */
import adminer from "./adminer.yml" with { type: "text" };
import clickhouse from "./clickhouse.yml" with { type: "text" };
import mailpit from "./mailpit.yml" with { type: "text" };
import mariadb from "./mariadb.yml" with { type: "text" };
import meilisearch from "./meilisearch.yml" with { type: "text" };
import memcached from "./memcached.yml" with { type: "text" };
import minio from "./minio.yml" with { type: "text" };
import mongodb from "./mongodb.yml" with { type: "text" };
import mysql from "./mysql.yml" with { type: "text" };
import nats from "./nats.yml" with { type: "text" };
import postgres from "./postgres.yml" with { type: "text" };
import rabbitmq from "./rabbitmq.yml" with { type: "text" };
import redis from "./redis.yml" with { type: "text" };
import valkey from "./valkey.yml" with { type: "text" };

export const SNIPPET_FILES: readonly string[] = [
  adminer,
  clickhouse,
  mailpit,
  mariadb,
  meilisearch,
  memcached,
  minio,
  mongodb,
  mysql,
  nats,
  postgres,
  rabbitmq,
  redis,
  valkey,
];
