/** `sundeck versions`: an app's kept compose versions, newest first. */
import { defineCommand } from "citty";
import { ago, outputFormat, printJson, printTable } from "../client/output";
import type { AppVersion } from "../shared/deploys";
import { appArg, appPath, connect, contextArg, outputArg, slugArg } from "./remote";

export default defineCommand({
  meta: { name: "versions", description: "List an app's kept compose versions" },
  args: { ...appArg, ...outputArg, ...contextArg },
  async run({ args }) {
    const format = outputFormat(args.output);
    const slug = slugArg(args.app, "--app");
    const list = await connect(args).get<AppVersion[]>(appPath(slug, "/versions"));
    if (format === "json") return printJson(list);
    printTable(
      ["version", "current", "status", "source", "by", "hash", "created"],
      list.map((v) => [
        v.version,
        v.current ? "*" : "",
        v.status,
        v.source,
        v.created_by,
        v.hash.slice(0, 12),
        ago(v.created_at),
      ]),
    );
  },
});
