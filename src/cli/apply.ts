/** `sundeck apply`: deploy a compose file (and its .env) to the server, following the deploy's output to the end. */
import { defineCommand } from "citty";
import type { Api } from "../client/api";
import { type LocalApp, readAppDir, readComposeFile } from "../client/local";
import type { Progress } from "../client/progress";
import type { Accepted, DeployFrame } from "../shared/deploys";
import { UsageError } from "./exit";
import { appPath, connect, contextArg, detachArg, slugArg, track } from "./remote";

/** Deploy `app` and wait for the result (unless detached); throws a CliError when the deploy fails. */
export async function deployLocal(
  api: Api,
  app: LocalApp,
  o: { detach: boolean; onFrame?: (f: DeployFrame, p: Progress) => void },
): Promise<void> {
  const body: Record<string, unknown> = { slug: app.slug, compose: app.compose };
  // no env file: the server keeps the app's current .env
  if (app.env) body.env = app.env;
  const done = await track(
    api,
    { slug: app.slug, what: "deploy", label: `deploying ${app.slug}`, detach: o.detach, onFrame: o.onFrame },
    () => api.post<Accepted>("/apps/deploy", body),
  );
  if (!done) return;
  const view = await api.maybe("GET", appPath(app.slug));
  const version = view?.current_version?.version;
  const ports = (view?.services ?? []).flatMap((s: any) => (s.ports as string[]).map((p) => `${s.name} ${p}`));
  process.stdout.write(
    `deployed ${app.slug}${version ? ` version ${version}` : ""}${ports.length ? ` (${ports.join(", ")})` : ""}\n`,
  );
}

export default defineCommand({
  meta: { name: "apply", description: "Deploy a compose file (-f FILE --name SLUG) or an app directory (-d DIR)" },
  args: {
    file: { type: "string", alias: "f", description: "compose file", valueHint: "file" },
    dir: { type: "string", alias: "d", description: "app directory with docker-compose.yml and .env", valueHint: "dir" },
    name: { type: "string", description: "app name (default with -d: the directory's name)", valueHint: "slug" },
    "env-file": { type: "string", description: "env file to send (default: .env next to the compose file)", valueHint: "file" },
    ...detachArg,
    ...contextArg,
  },
  async run({ args }) {
    if (!args.file === !args.dir) throw new UsageError("give either -f FILE --name SLUG or -d DIR");
    let app: LocalApp;
    if (args.file) {
      const slug = slugArg(args.name, "--name");
      app = readComposeFile(args.file, slug, args["env-file"]);
    } else {
      if (args.name !== undefined) slugArg(args.name, "--name");
      app = readAppDir(args.dir!, args.name);
      if (args["env-file"]) app = readComposeFile(app.composePath, app.slug, args["env-file"]);
    }
    await deployLocal(connect(args), app, { detach: args.detach });
  },
});
