/** `sundeck rollback --app SLUG --version N`: deploy a kept version again (N as `sundeck versions` shows it). */
import { defineCommand } from "citty";
import type { Accepted, AppVersion } from "../shared/deploys";
import { CliError } from "./errors";
import { UsageError } from "./exit";
import { appArg, appPath, connect, contextArg, detachArg, slugArg, track } from "./remote";

export default defineCommand({
  meta: { name: "rollback", description: "Deploy a kept version of an app again" },
  args: {
    ...appArg,
    version: { type: "string", description: "version number (see sundeck versions)", required: true, valueHint: "n" },
    ...detachArg,
    ...contextArg,
  },
  async run({ args }) {
    const slug = slugArg(args.app, "--app");
    if (!/^\d+$/.test(args.version)) throw new UsageError("--version must be a version number");
    const api = connect(args);
    const list = await api.get<AppVersion[]>(appPath(slug, "/versions"));
    const v = list.find((x) => x.version === Number(args.version));
    if (!v) throw new CliError(`${slug} has no version ${args.version} (see sundeck versions --app ${slug})`);
    const d = await track(
      api,
      { slug, what: "rollback", label: `rolling ${slug} back to version ${v.version}`, detach: args.detach },
      () => api.post<Accepted>(appPath(slug, "/rollback"), { version_id: v.id }),
    );
    if (d) process.stdout.write(`${slug} rolled back to version ${v.version}\n`);
  },
});
