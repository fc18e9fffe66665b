/** `sundeck list`: the apps on the server with their status, version and services. */
import { defineCommand } from "citty";
import { ago, outputFormat, printJson, printTable } from "../client/output";
import type { AppView } from "../shared/apps";
import { connect, contextArg, outputArg } from "./remote";

/** "web 1/1" per service: running containers over wanted replicas. */
export function servicesCell(app: Pick<AppView, "services">): string {
  return app.services
    .map((s) => `${s.name} ${s.containers.filter((c) => c.state === "running").length}/${s.replicas}`)
    .join(", ");
}

export default defineCommand({
  meta: { name: "list", description: "List apps" },
  args: { ...outputArg, ...contextArg },
  async run({ args }) {
    const format = outputFormat(args.output);
    const apps = await connect(args).get<AppView[]>("/apps");
    if (format === "json") return printJson(apps);
    printTable(
      ["name", "status", "version", "services", "updated"],
      apps.map((a) => [a.slug, a.status, a.current_version?.version ?? null, servicesCell(a) || null, ago(a.updated_at)]),
    );
  },
});
