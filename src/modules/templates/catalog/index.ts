/**
 * The template catalog, embedded in the binary: one YAML file per template (id, name, description, category, tags,
 * version, icon, web, variables, notes, compose). Imported on first use only (catalog.ts), so a server that never
 * lists templates never holds them. Add a file here and to the list; test/unit/modules/templates holds every one.
 */
import adminer from "./adminer.yml" with { type: "text" };
import codeServer from "./code-server.yml" with { type: "text" };
import gitea from "./gitea.yml" with { type: "text" };
import mailpit from "./mailpit.yml" with { type: "text" };
import meilisearch from "./meilisearch.yml" with { type: "text" };
import minio from "./minio.yml" with { type: "text" };
import n8n from "./n8n.yml" with { type: "text" };
import pgadmin from "./pgadmin.yml" with { type: "text" };
import registry from "./registry.yml" with { type: "text" };
import staticSite from "./static-site.yml" with { type: "text" };
import umami from "./umami.yml" with { type: "text" };
import uptimeKuma from "./uptime-kuma.yml" with { type: "text" };
import vaultwarden from "./vaultwarden.yml" with { type: "text" };
import wordpress from "./wordpress.yml" with { type: "text" };

export const TEMPLATE_FILES: readonly string[] = [
  adminer,
  codeServer,
  gitea,
  mailpit,
  meilisearch,
  minio,
  n8n,
  pgadmin,
  registry,
  staticSite,
  umami,
  uptimeKuma,
  vaultwarden,
  wordpress,
];
