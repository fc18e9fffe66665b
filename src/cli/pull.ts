/** `sundeck pull`: write apps' docker-compose.yml and .env from the server into DIR/<slug>/ (atomically, .env 0600). */

import { relative } from "node:path";
import { defineCommand } from "citty";
import { fetchServerApp } from "../client/compare";
import { writeAppDir } from "../client/local";
import { CliError } from "./errors";
import { UsageError } from "./exit";
import { connect, contextArg, slugArg } from "./remote";

export default defineCommand({
  meta: { name: "pull", description: "Download apps' compose files and .env into DIR/<slug>/" },
  args: {
    app: { type: "string", description: "the app to pull", valueHint: "slug" },
    all: { type: "boolean", description: "every app you can see", default: false },
    out: { type: "string", alias: "o", description: "directory to write into", default: ".", valueHint: "dir" },
    ...contextArg,
  },
  async run({ args }) {
    if (!args.app === !args.all) throw new UsageError("give either --app SLUG or --all");
    const api = connect(args);
    const slugs = args.app
      ? [slugArg(args.app, "--app")]
      : (await api.get<Array<{ slug: string }>>("/apps")).map((a) => a.slug).sort();
    let hidden = false;
    for (const slug of slugs) {
      const app = await fetchServerApp(api, slug);
      if (!app) {
        if (args.app) throw new CliError(`no app named ${slug} on ${api.where}`);
        continue; // removed while we listed
      }
      hidden ||= Object.values(app.env).some((v) => v === null);
      const env = Object.fromEntries(Object.entries(app.env).map(([k, v]) => [k, v ?? ""]));
      const paths = writeAppDir(args.out, slug, app.compose, env);
      process.stdout.write(`${slug}: wrote ${paths.map((p) => relative(process.cwd(), p) || p).join(", ")}\n`);
    }
    if (hidden) process.stderr.write("sundeck: env values are hidden from viewers: .env files have the keys only\n");
    if (args.all && slugs.length === 0) process.stdout.write("no apps\n");
  },
});
