/** `sundeck whoami`: which server, context and user the remote commands act as. */
import { defineCommand } from "citty";
import { outputFormat, printJson } from "../client/output";
import type { Me } from "../shared/auth";
import { connect, contextArg, outputArg } from "./remote";

export default defineCommand({
  meta: { name: "whoami", description: "Show the server and user the remote commands use" },
  args: { ...outputArg, ...contextArg },
  async run({ args }) {
    const format = outputFormat(args.output);
    const api = connect(args);
    const me = await api.get<Me>("/me");
    if (format === "json") return printJson({ ...me, url: api.target.url, context: api.target.context });
    process.stdout.write(`${me.username} (${me.role}) on ${api.where}\n`);
  },
});
