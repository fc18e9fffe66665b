/** `sundeck remove`: take an app down and delete it on the server (volumes kept unless --volumes). */
import { defineCommand } from "citty";
import type { Accepted } from "../shared/deploys";
import { CliError } from "./errors";
import { appPath, confirm, connect, contextArg, detachArg, slugArg, track } from "./remote";

export default defineCommand({
  meta: { name: "remove", description: "Remove an app: its containers, files and versions (volumes with --volumes)" },
  args: {
    name: { type: "string", alias: "app", description: "app name (slug)", required: true, valueHint: "slug" },
    volumes: { type: "boolean", description: "also delete the app's volumes (their data is lost)", default: false },
    yes: { type: "boolean", alias: "y", description: "do not ask for confirmation", default: false },
    ...detachArg,
    ...contextArg,
  },
  async run({ args }) {
    const slug = slugArg(args.name, "--name");
    const api = connect(args);
    // fail on an unknown app before asking anything
    await api.get(appPath(slug));
    if (!args.yes && process.stdin.isTTY && process.stderr.isTTY) {
      const what = `remove app ${slug} from ${api.where}${args.volumes ? " with its volumes" : ""}?`;
      if (!(await confirm(what))) throw new CliError("not removed");
    }
    await track(api, { slug, what: "removal", label: `removing ${slug}`, detach: args.detach }, () =>
      api.del<Accepted>(appPath(slug, args.volumes ? "?volumes=true" : "")),
    );
    if (!args.detach) process.stdout.write(`removed ${slug}${args.volumes ? " and its volumes" : ""}\n`);
  },
});
