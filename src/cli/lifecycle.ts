/** `sundeck start|stop|restart|redeploy`: app lifecycle actions, followed to the end like a deploy. */
import { defineCommand } from "citty";
import type { Accepted } from "../shared/deploys";
import { appArg, appPath, connect, contextArg, detachArg, slugArg, track } from "./remote";

const verb = (name: string, route: string, description: string, label: string, done: string) =>
  defineCommand({
    meta: { name, description },
    args: { ...appArg, ...detachArg, ...contextArg },
    async run({ args }) {
      const slug = slugArg(args.app, "--app");
      const api = connect(args);
      const d = await track(api, { slug, what: name, label: `${label} ${slug}`, detach: args.detach }, () =>
        api.post<Accepted>(appPath(slug, `/${route}`)),
      );
      if (d) process.stdout.write(`${slug} ${done}\n`);
    },
  });

export const start = verb("start", "start", "Start a stopped app", "starting", "started");
export const stop = verb("stop", "stop", "Stop an app (it stays stopped until started)", "stopping", "stopped");
export const restart = verb("restart", "restart", "Restart an app's containers", "restarting", "restarted");
export const redeploy = verb("redeploy", "pull", "Pull every image again and redeploy", "redeploying", "redeployed");
