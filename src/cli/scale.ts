/** `sundeck scale --app SLUG web=3 worker=2`: set replicas (refused with the server's reason where a service cannot scale). */
import { defineCommand } from "citty";
import type { Accepted } from "../shared/deploys";
import { UsageError } from "./exit";
import { appArg, appPath, connect, contextArg, detachArg, slugArg, track } from "./remote";

/** `name=count` words as a map. */
export function parseScale(words: string[]): Record<string, number> {
  if (words.length === 0) throw new UsageError("name at least one service=count, e.g. web=3");
  const out: Record<string, number> = {};
  for (const w of words) {
    const m = /^([A-Za-z0-9][A-Za-z0-9_.-]*)=(\d{1,4})$/.exec(w);
    if (!m) throw new UsageError(`${JSON.stringify(w)} is not service=count`);
    out[m[1]] = Number(m[2]);
  }
  return out;
}

export default defineCommand({
  meta: { name: "scale", description: "Set the number of containers of services: scale --app SLUG web=3 worker=2" },
  args: { ...appArg, ...detachArg, ...contextArg },
  async run({ args }) {
    const slug = slugArg(args.app, "--app");
    const services = parseScale(args._);
    const api = connect(args);
    const d = await track(api, { slug, what: "scale", label: `scaling ${slug}`, detach: args.detach }, () =>
      api.post<Accepted>(appPath(slug, "/scale"), { services }),
    );
    if (d) {
      const list = Object.entries(services).map(([k, v]) => `${k}=${v}`);
      process.stdout.write(`scaled ${slug}: ${list.join(", ")}\n`);
    }
  },
});
