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
    // handlers go in before anything listens, so a signal at any point stops the server gracefully
    let signalled: (signal: string) => void = () => {};
    const signal = new Promise<string>((resolve) => (signalled = resolve));
    process.once("SIGTERM", () => signalled("SIGTERM"));
    process.once("SIGINT", () => signalled("SIGINT"));

    const ctx = createContext(config, { configSource: source });
    const server = await startServer(ctx);
    if (!source) process.stdout.write(`\nSundeck is running. Open ${server.url} to set up the first user.\n\n`);
    ctx.log.info("signal received", { signal: await signal });
    await server.stop();
  },
});
