/** `sundeck logs`: an app service's container logs (every replica); stderr lines go to stderr. */
import { defineCommand } from "citty";
import { streamLogs } from "../client/stream";
import { Interrupted, UsageError } from "./exit";
import { appArg, connect, contextArg, interruptible, slugArg } from "./remote";

export default defineCommand({
  meta: { name: "logs", description: "Print an app's container logs" },
  args: {
    ...appArg,
    service: {
      type: "string",
      description: "compose service (default: web, else the only service, else the first routed one)",
      valueHint: "name",
    },
    tail: { type: "string", description: "lines of history to print first (at most 10000)", default: "100", valueHint: "n" },
    since: { type: "string", description: "only lines since a time (RFC 3339) or for a duration (10m)", valueHint: "when" },
    follow: { type: "boolean", alias: "f", description: "keep printing new lines until interrupted", default: false },
    timestamps: { type: "boolean", alias: "t", description: "prefix each line with its time", default: false },
    ...contextArg,
  },
  async run({ args }) {
    const slug = slugArg(args.app, "--app");
    if (!/^\d+$/.test(args.tail) || Number(args.tail) > 10_000)
      throw new UsageError("--tail must be a whole number from 0 to 10000");
    const api = connect(args);
    const print = (f: { ts?: string; stream?: string; line?: string }) => {
      const text = `${args.timestamps && f.ts ? `${f.ts} ` : ""}${f.line ?? ""}\n`;
      (f.stream === "stderr" ? process.stderr : process.stdout).write(text);
    };
    const run = (signal?: AbortSignal) =>
      streamLogs(
        api,
        slug,
        { service: args.service, tail: Number(args.tail), since: args.since, follow: args.follow },
        print,
        signal,
      );
    // following ends with Ctrl-C: that is the normal way out, so it exits 0 quietly
    if (!args.follow) return run();
    await interruptible(run, () => "").catch((e) => {
      if (!(e instanceof Interrupted)) throw e;
    });
  },
});
