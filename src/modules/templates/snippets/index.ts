/**
 * Service snippets, embedded in the binary: one YAML file each (id, name, description, category, icon, variables,
 * notes, compose), read by the bundler at build time like the template catalog. Imported on first use only
 * (snippets.ts). Add a file here and to the list;
 * test/unit/modules/templates/snippets.test.ts holds every one.
 */
import adminer from "./adminer.yml";
import clickhouse from "./clickhouse.yml";
import mailpit from "./mailpit.yml";
import mariadb from "./mariadb.yml";
import meilisearch from "./meilisearch.yml";
import memcached from "./memcached.yml";
import minio from "./minio.yml";
import mongodb from "./mongodb.yml";
import mysql from "./mysql.yml";
import nats from "./nats.yml";
import postgres from "./postgres.yml";
import rabbitmq from "./rabbitmq.yml";
import redis from "./redis.yml";
import valkey from "./valkey.yml";

export const SNIPPET_FILES: readonly unknown[] = [
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
