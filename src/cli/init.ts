/** `sundeck init`: write a complete, commented config (0600) with a fresh master_secret that `serve` accepts as is. */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { defineCommand } from "citty";
import { configPath, loadConfig } from "../config/load";
import { defaults } from "../config/schema";
import { randomHex } from "../lib/crypto";
import { writeFileAtomic } from "../lib/fs";
import { CliError } from "./errors";

/** The config text `init` writes. */
export function configTemplate(o: { dataDir: string; appsDir: string; domain: string; email: string; secret: string }): string {
  const d = defaults();
  const mode = o.email ? "auto" : "local";
  const q = (s: string) => JSON.stringify(s);
  return `# Sundeck server configuration, written by \`sundeck init\`.
# Every key is shown with its value; see README.md for what each one does.

# Database, master secret of the embedded default, local backups.
data_dir: ${q(o.dataDir)}
# Watched directory: each subdirectory with a docker-compose.yml is one app.
apps_dir: ${q(o.appsDir)}

# Reverse proxy listener, and the plain HTTP listener that answers ACME and redirects to HTTPS
# ("" disables it; ignored when tls.mode is off).
listen_addr: ${q(d.listen_addr)}
http_listen_addr: ":80"

# Management API and dashboard. Keep it on 127.0.0.1 and reach it through \`domain\` or an SSH tunnel.
management_addr: ${q(d.management_addr)}
management_port: ${d.management_port}

# Domain of the dashboard behind the proxy, and the host used for quick-test app domains.
domain: ${q(o.domain)}
public_host: ""

tls:
  # auto (ACME, needs email), custom (uploaded certificates), local (own CA), or off.
  mode: ${mode}
  email: ${q(o.email)}

# Encrypts stored credentials and signs sessions. Keep it secret; changing it logs everyone out
# and makes stored credentials unreadable.
master_secret: ${q(o.secret)}

# Days to keep activity entries; 0 keeps them forever.
audit_retention_days: ${d.audit_retention_days}

metrics:
  tiers:
${d.metrics.tiers.map((t) => `    - { name: ${q(t.name)}, resolution: ${t.resolution}, retention: ${t.retention} }`).join("\n")}
  # GET /metrics in the Prometheus text format, on the management port, for API keys of admins.
  prometheus: ${d.metrics.prometheus}

# Restores: the most an archive may expand to (bytes; 8 GiB) and how many run at once server-wide.
backups:
  max_restore_bytes: ${d.backups.max_restore_bytes}
  max_concurrent_restores: ${d.backups.max_concurrent_restores}

# Alert webhooks reach public addresses only. true lets receivers on private addresses (a LAN) through;
# the server logs a warning at start while it is on.
webhooks:
  allow_private_destinations: ${d.webhooks.allow_private_destinations}

# Request rate limit of the API. Proxied apps are limited only when their sundeck.ratelimit.* labels ask for it;
# fields the labels leave out come from here.
ratelimit:
  requests: ${d.ratelimit.requests}
  window: ${d.ratelimit.window}
  burst: ${d.ratelimit.burst}
  by: ${d.ratelimit.by}

# The reverse proxy's connection caps, request head limits and timeouts.
proxy:
${Object.entries(d.proxy)
  .map(([k, v]) => `  ${k}: ${v}`)
  .join("\n")}

# WebSocket streams (deploy output, container logs, process logs) open at once, in all and per user, and the MiB
# all of them may hold unsent to clients that fall behind (past it the furthest behind are closed).
streams:
  max_open: ${d.streams.max_open}
  max_per_user: ${d.streams.max_per_user}
  max_buffered_mib: ${d.streams.max_buffered_mib}

# Host paths apps may bind-mount besides their own directory (for example a media library). Empty: none.
# Only whoever edits this file can widen it; the data dir, the apps dir and the docker socket stay refused.
compose:
  allowed_host_paths: []

# Stored registry credentials applied to every app.
registries: []

# Proxies whose X-Forwarded-For is believed (addresses or CIDRs).
trusted_proxies: []

# Mirror app configuration to a git remote.
git_sync:
  enabled: false
  remote: ""
  branch: main
`;
}

export default defineCommand({
  meta: { name: "init", description: "Write a new server config with a fresh master secret" },
  args: {
    config: {
      type: "string",
      description: "where to write (default $SUNDECK_CONFIG or /etc/sundeck/config.yaml)",
      valueHint: "path",
    },
    "data-dir": { type: "string", description: "data directory", default: "/var/lib/sundeck", valueHint: "dir" },
    "apps-dir": { type: "string", description: "apps directory", default: "/etc/sundeck/apps", valueHint: "dir" },
    domain: { type: "string", description: "dashboard domain", default: "" },
    email: { type: "string", description: "ACME account email (selects tls.mode auto; without it, local)", default: "" },
    force: { type: "boolean", description: "overwrite an existing file", default: false },
  },
  run({ args }) {
    const { path } = configPath({ path: args.config });
    const target = resolve(path);
    if (existsSync(target) && !args.force) throw new CliError(`${target} exists; pass --force to overwrite it`);
    const text = configTemplate({
      dataDir: resolve(args["data-dir"]),
      appsDir: resolve(args["apps-dir"]),
      domain: args.domain,
      email: args.email,
      secret: randomHex(32),
    });
    writeFileAtomic(target, text, 0o600);
    // prove that serve will accept it: the same loader, the same validation
    loadConfig({ path: target });
    process.stdout.write(`wrote ${target}\n`);
  },
});
