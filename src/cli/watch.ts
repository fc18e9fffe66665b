/** `sundeck watch`: follow the deploy or action running for an app to its end (exit 1 when it fails). */
import { defineCommand } from "citty";
import { Progress } from "../client/progress";
import { followCurrent } from "../client/stream";
import { CliError } from "./errors";
import { appArg, appPath, connect, contextArg, interruptible, outcome, slugArg } from "./remote";

export default defineCommand({
  meta: { name: "watch", description: "Follow the deploy or action running for an app" },
  args: { ...appArg, ...contextArg },
  async run({ args }) {
    const slug = slugArg(args.app, "--app");
    const api = connect(args);
    if (!(await api.maybe("GET", appPath(slug)))) throw new CliError(`no app named ${slug} on ${api.where}`);
    const progress = new Progress();
    progress.start(`waiting for ${slug}`);
    let d: Awaited<ReturnType<typeof followCurrent>>;
    try {
      d = await interruptible(
        (signal) => followCurrent(api, slug, progress.frame, signal),
        () => `interrupted: the work on ${slug} goes on on the server`,
      );
    } finally {
      progress.stop();
    }
    if (!d) return void process.stdout.write(`nothing is running for ${slug}\n`);
    outcome({ slug, what: d.action }, d);
    process.stdout.write(`${d.action} of ${slug} ${d.status}\n`);
  },
});
