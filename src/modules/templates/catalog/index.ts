/**
 * The template catalog, embedded in the binary: one YAML file per template (id, name, description, category, tags,
 * version, icon, web, database, variables, notes, compose), read by the bundler at build time (a `.yml` import is its
 * data, so the server parses no YAML for it). Imported on first use only (catalog.ts), so a server that never lists
 * templates never holds them. Add a file here and to the list; test/unit/modules/templates holds every one.
 */
import actual from "./actual.yml";
import adminer from "./adminer.yml";
import authelia from "./authelia.yml";
import codeServer from "./code-server.yml";
import filebrowser from "./filebrowser.yml";
import gitea from "./gitea.yml";
import gotify from "./gotify.yml";
import grafana from "./grafana.yml";
import homepage from "./homepage.yml";
import influxdb from "./influxdb.yml";
import itTools from "./it-tools.yml";
import jellyfin from "./jellyfin.yml";
import kanboard from "./kanboard.yml";
import linkding from "./linkding.yml";
import mailpit from "./mailpit.yml";
import mariadb from "./mariadb.yml";
import meilisearch from "./meilisearch.yml";
import memcached from "./memcached.yml";
import memos from "./memos.yml";
import minio from "./minio.yml";
import mongodb from "./mongodb.yml";
import mysql from "./mysql.yml";
import n8n from "./n8n.yml";
import nats from "./nats.yml";
import navidrome from "./navidrome.yml";
import nextcloud from "./nextcloud.yml";
import nodeRed from "./node-red.yml";
import ntfy from "./ntfy.yml";
import paperless from "./paperless.yml";
import pgadmin from "./pgadmin.yml";
import phpmyadmin from "./phpmyadmin.yml";
import postgres from "./postgres.yml";
import privatebin from "./privatebin.yml";
import prometheus from "./prometheus.yml";
import rabbitmq from "./rabbitmq.yml";
import redis from "./redis.yml";
import registry from "./registry.yml";
import staticSite from "./static-site.yml";
import syncthing from "./syncthing.yml";
import umami from "./umami.yml";
import uptimeKuma from "./uptime-kuma.yml";
import valkey from "./valkey.yml";
import vaultwarden from "./vaultwarden.yml";
import webhookTester from "./webhook-tester.yml";
import wikijs from "./wikijs.yml";
import woodpecker from "./woodpecker.yml";
import wordpress from "./wordpress.yml";

export const TEMPLATE_FILES: readonly unknown[] = [
  actual,
  adminer,
  authelia,
  codeServer,
  filebrowser,
  gitea,
  gotify,
  grafana,
  homepage,
  influxdb,
  itTools,
  jellyfin,
  kanboard,
  linkding,
  mailpit,
  mariadb,
  meilisearch,
  memcached,
  memos,
  minio,
  mongodb,
  mysql,
  n8n,
  nats,
  navidrome,
  nextcloud,
  nodeRed,
  ntfy,
  paperless,
  pgadmin,
  phpmyadmin,
  postgres,
  privatebin,
  prometheus,
  rabbitmq,
  redis,
  registry,
  staticSite,
  syncthing,
  umami,
  uptimeKuma,
  valkey,
  vaultwarden,
  webhookTester,
  wikijs,
  woodpecker,
  wordpress,
];
