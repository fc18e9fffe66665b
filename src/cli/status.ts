/** `sundeck status`: one app in detail: status, services with their containers, endpoints, last deploy. */
import { defineCommand } from "citty";
import { ago, outputFormat, printJson, printTable } from "../client/output";
import type { AppView } from "../shared/apps";
import type { SystemInfo } from "../shared/system";
import { appArg, appPath, connect, contextArg, outputArg, slugArg } from "./remote";

export default defineCommand({
  meta: { name: "status", description: "Show one app: services, containers, endpoints and the last deploy" },
  args: { ...appArg, ...outputArg, ...contextArg },
  async run({ args }) {
    const format = outputFormat(args.output);
    const slug = slugArg(args.app, "--app");
    const api = connect(args);
    const a = await api.get<AppView>(appPath(slug));
    if (format === "json") return printJson(a);
    const w = (s: string) => process.stdout.write(`${s}\n`);
    w(`${a.slug}: ${a.status}${a.current_version ? `, version ${a.current_version.version}` : ""}, updated ${ago(a.updated_at)}`);
    const rows: Array<Array<string | number | null>> = [];
    for (const s of a.services) {
      const cs = s.containers.length ? s.containers : [null];
      for (const c of cs) {
        rows.push([
          s.name,
          s.image,
          s.replicas,
          s.ports.join(",") || null,
          c?.name ?? null,
          c ? `${c.state}${c.health ? ` (${c.health})` : ""}` : null,
        ]);
      }
    }
    if (rows.length) printTable(["service", "image", "replicas", "ports", "container", "state"], rows);
    // an endpoint without its own tls label follows the server's mode: name it
    const serverTls = a.endpoints.some((e) => e.tls === null)
      ? await api.get<SystemInfo>("/system/info").then(
          (i) => `${i.tls_mode}, the server's mode`,
          () => "the server's mode",
        )
      : "";
    for (const e of a.endpoints)
      w(`endpoint: ${e.hosts.join(",")}${e.path ?? ""} -> ${e.service}:${e.port} (tls ${e.tls ?? serverTls})`);
    const d = a.last_deploy;
    if (d) w(`last ${d.action}: ${d.status} ${ago(d.finished_at ?? d.started_at)}${d.error ? `: ${d.error}` : ""}`);
    else if (a.last_error) w(`last error: ${a.last_error}`);
  },
});
