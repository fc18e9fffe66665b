/** `sundeck versions`: an app's kept compose versions, newest first. */
import { defineCommand } from "citty";
import { ago, outputFormat, printJson, printTable } from "../client/output";
import { appArg, appPath, connect, contextArg, outputArg, slugArg } from "./remote";

/** A version as GET /apps/{slug}/versions lists it. */
export interface Version {
  id: number;
  version: number;
  hash: string;
  source: string;
  created_by: string | null;
  status: string;
  current: boolean;
  created_at: string;
}

export default defineCommand({
  meta: { name: "versions", description: "List an app's kept compose versions" },
  args: { ...appArg, ...outputArg, ...contextArg },
  async run({ args }) {
    const format = outputFormat(args.output);
    const slug = slugArg(args.app, "--app");
    const list = await connect(args).get<Version[]>(appPath(slug, "/versions"));
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
