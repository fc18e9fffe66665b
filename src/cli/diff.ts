/**
 * `sundeck diff`: unified diffs from the server's apps to local files. Exit 0 when identical, 1 when different (like
 * diff(1)); an app only on one side counts as a difference.
 */

import { join, relative } from "node:path";
import { defineCommand } from "citty";
import { appDiff, fetchServerApp } from "../client/compare";
import { type LocalApp, listAppDirs, readAppDir, readComposeFile } from "../client/local";
import { CliError } from "./errors";
import { ExitCode, UsageError } from "./exit";
import { connect, contextArg, slugArg } from "./remote";

export default defineCommand({
  meta: { name: "diff", description: "Show how local apps differ from the server's (exit 1 when they do)" },
  args: {
    app: { type: "string", description: "one app: compared with DIR/<slug>/ (or -f FILE)", valueHint: "slug" },
    dir: { type: "string", alias: "d", description: "directory of app directories (default with --app: .)", valueHint: "dir" },
    file: { type: "string", alias: "f", description: "with --app: a compose file to compare instead", valueHint: "file" },
    "env-file": { type: "string", description: "with -f: the env file (default: .env next to it)", valueHint: "file" },
    "show-values": { type: "boolean", description: "print env values instead of ***", default: false },
    ...contextArg,
  },
  async run({ args }) {
    if (!args.app && !args.dir) throw new UsageError("give --app SLUG or -d DIR");
    if (args.file && !args.app) throw new UsageError("-f needs --app");
    if (args.file && args.dir) throw new UsageError("give -f or -d, not both");
    const api = connect(args);
    const o = { showValues: args["show-values"] };
    let different = false;
    const out = (s: string) => {
      if (s) {
        different = true;
        process.stdout.write(s);
      }
    };

    if (args.app) {
      const slug = slugArg(args.app, "--app");
      const local: LocalApp = args.file
        ? readComposeFile(args.file, slug, args["env-file"])
        : readAppDir(join(args.dir ?? ".", slug), slug);
      const server = await fetchServerApp(api, slug);
      if (!server) throw new CliError(`no app named ${slug} on ${api.where}`);
      out(appDiff(local, server, o));
    } else {
      const locals = listAppDirs(args.dir!);
      const remote = (await api.get<Array<{ slug: string }>>("/apps")).map((a) => a.slug);
      for (const local of locals) {
        const server = remote.includes(local.slug) ? await fetchServerApp(api, local.slug) : null;
        if (server) out(appDiff(local, server, o));
        else out(`only local: ${local.slug} (${relative(process.cwd(), local.composePath)})\n`);
      }
      const mine = new Set(locals.map((a) => a.slug));
      for (const slug of remote.filter((s) => !mine.has(s)).sort()) out(`only on server: ${slug}\n`);
    }
    if (different) throw new ExitCode(1);
  },
});
