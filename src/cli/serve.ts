/** `sundeck serve`: run the server until SIGTERM or SIGINT. */
import { defineCommand } from "citty";
import { loadConfig } from "../config/load";
import { createContext } from "../context";
import { startServer } from "../server";
import { configArg } from "./local";

export default defineCommand({
  meta: { name: "serve", description: "Run the Sundeck server" },
  args: { ...configArg },
  async run({ args }) {
    const { config, source } = loadConfig({ path: args.config });
    const ctx = createContext(config, { configSource: source });
    const server = await startServer(ctx);
    if (!source) process.stdout.write(`\nSundeck is running. Open ${server.url} to set up the first user.\n\n`);
    await new Promise<void>((resolve) => {
      const stop = (signal: string) => {
        ctx.log.info("signal received", { signal });
        server.stop().then(resolve, resolve);
      };
      process.once("SIGTERM", () => stop("SIGTERM"));
      process.once("SIGINT", () => stop("SIGINT"));
    });
  },
});
