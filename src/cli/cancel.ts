/** `sundeck cancel`: cancel the deploy or action running for an app. */
import { defineCommand } from "citty";
import { appArg, appPath, connect, contextArg, slugArg } from "./remote";

export default defineCommand({
  meta: { name: "cancel", description: "Cancel the deploy or action running for an app" },
  args: { ...appArg, ...contextArg },
  async run({ args }) {
    const slug = slugArg(args.app, "--app");
    await connect(args).post(appPath(slug, "/cancel"));
    process.stdout.write(`cancel requested for ${slug}\n`);
  },
});
