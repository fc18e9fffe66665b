/**
 * The template catalog, embedded in the binary: one YAML file per template (id, name, description, category, tags,
 * version, icon, web, database, variables, notes, compose). Imported on first use only (catalog.ts), so a server that
 * never lists templates never holds them. Add a file here and to the list; test/unit/modules/templates holds every one.
 */
import actual from "./actual.yml" with { type: "text" };
import adminer from "./adminer.yml" with { type: "text" };
import authelia from "./authelia.yml" with { type: "text" };
import codeServer from "./code-server.yml" with { type: "text" };
import filebrowser from "./filebrowser.yml" with { type: "text" };
import gitea from "./gitea.yml" with { type: "text" };
import gotify from "./gotify.yml" with { type: "text" };
import grafana from "./grafana.yml" with { type: "text" };
import homepage from "./homepage.yml" with { type: "text" };
import influxdb from "./influxdb.yml" with { type: "text" };
import itTools from "./it-tools.yml" with { type: "text" };
import jellyfin from "./jellyfin.yml" with { type: "text" };
import kanboard from "./kanboard.yml" with { type: "text" };
import linkding from "./linkding.yml" with { type: "text" };
import mailpit from "./mailpit.yml" with { type: "text" };
import mariadb from "./mariadb.yml" with { type: "text" };
import meilisearch from "./meilisearch.yml" with { type: "text" };
import memcached from "./memcached.yml" with { type: "text" };
import memos from "./memos.yml" with { type: "text" };
import minio from "./minio.yml" with { type: "text" };
import mongodb from "./mongodb.yml" with { type: "text" };
import mysql from "./mysql.yml" with { type: "text" };
import n8n from "./n8n.yml" with { type: "text" };
import nats from "./nats.yml" with { type: "text" };
import navidrome from "./navidrome.yml" with { type: "text" };
import nextcloud from "./nextcloud.yml" with { type: "text" };
import nodeRed from "./node-red.yml" with { type: "text" };
import ntfy from "./ntfy.yml" with { type: "text" };
import paperless from "./paperless.yml" with { type: "text" };
import pgadmin from "./pgadmin.yml" with { type: "text" };
import phpmyadmin from "./phpmyadmin.yml" with { type: "text" };
import postgres from "./postgres.yml" with { type: "text" };
import privatebin from "./privatebin.yml" with { type: "text" };
import prometheus from "./prometheus.yml" with { type: "text" };
import rabbitmq from "./rabbitmq.yml" with { type: "text" };
import redis from "./redis.yml" with { type: "text" };
import registry from "./registry.yml" with { type: "text" };
import staticSite from "./static-site.yml" with { type: "text" };
import syncthing from "./syncthing.yml" with { type: "text" };
import umami from "./umami.yml" with { type: "text" };
import uptimeKuma from "./uptime-kuma.yml" with { type: "text" };
import valkey from "./valkey.yml" with { type: "text" };
import vaultwarden from "./vaultwarden.yml" with { type: "text" };
import webhookTester from "./webhook-tester.yml" with { type: "text" };
import wikijs from "./wikijs.yml" with { type: "text" };
import woodpecker from "./woodpecker.yml" with { type: "text" };
import wordpress from "./wordpress.yml" with { type: "text" };

export const TEMPLATE_FILES: readonly string[] = [
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
