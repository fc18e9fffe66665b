/** `sundeck serve`: run the server until SIGTERM or SIGINT. */
import { defineCommand } from "citty";
import { loadConfig } from "../config/load";
import { createContext } from "../context";
import { startTrace } from "../lib/debug-memory";
import { sdNotify } from "../lib/sd-notify";
import { BACKGROUND_AFTER_MS, startServer } from "../server";
import { CliError } from "./errors";
import { configArg } from "./local";

export default defineCommand({
  meta: { name: "serve", description: "Run the Sundeck server" },
  args: { ...configArg },
  async run({ args }) {
    const trace = startTrace();
    trace.mark("serve_loaded");
    const { config, source } = loadConfig({ path: args.config });
    trace.mark("config_loaded");
    // handlers go in before anything listens, so a signal at any point stops the server gracefully
    let signalled: (signal: string) => void = () => {};
    const signal = new Promise<string>((resolve) => (signalled = resolve));
    process.once("SIGTERM", () => signalled("SIGTERM"));
    process.once("SIGINT", () => signalled("SIGINT"));

    const ctx = createContext(config, { configSource: source });
    trace.mark("context_created");
    const server = await startServer(ctx, { backgroundAfterMs: BACKGROUND_AFTER_MS });
    // startServer returns once Docker is detected, the proxy listens and the API answers: that is ready, unless
    // Docker is missing. A service manager waiting for readiness then gets a failure (and restarts us later)
    if (process.env.NOTIFY_SOCKET) {
      if (ctx.docker.problem) {
        await sdNotify(`STATUS=${ctx.docker.problem}`).catch(() => {});
        await server.stop();
        throw new CliError(`not ready: ${ctx.docker.problem}`);
      }
      await sdNotify(`READY=1\nSTATUS=serving on ${server.url}`);
    }
    if (!source) {
      const next = ctx.auth.needsSetup() ? `Open ${server.url} to set up the first user.` : `Dashboard: ${server.url}`;
      process.stdout.write(`\nSundeck is running. ${next}\n\n`);
    }
    ctx.log.info("signal received", { signal: await signal });
    await sdNotify("STOPPING=1").catch(() => {});
    await server.stop();
  },
});
