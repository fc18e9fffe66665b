/**
 * `sundeck sync`: make the server match a directory of apps. Deploys every app whose compose or .env differs (new ones
 * too), one after the other with progress; removes server apps missing from the directory only with --prune.
 */
import { defineCommand } from "citty";
import type { Api } from "../client/api";
import { planSync } from "../client/compare";
import { listAppDirs } from "../client/local";
import type { Accepted } from "../shared/deploys";
import { deployLocal } from "./apply";
import { CliError } from "./errors";
import { isWorkFailure } from "./failure";
import { appPath, connect, contextArg, track } from "./remote";

/** Run one step; a failure is reported and counted, an interrupt ends the sync. */
async function step(failed: string[], slug: string, fn: () => Promise<void>): Promise<boolean> {
  try {
    await fn();
    return true;
  } catch (e) {
    // an interrupt (ExitCode), a usage mistake or a bug ends the whole sync
    if (!isWorkFailure(e)) throw e;
    process.stderr.write(`sundeck: ${e.message}\n`);
    failed.push(slug);
    return false;
  }
}

async function prune(api: Api, slug: string): Promise<void> {
  await track(api, { slug, what: "removal", label: `removing ${slug}`, detach: false }, () => api.del<Accepted>(appPath(slug)));
  process.stdout.write(`removed ${slug}\n`);
}

export default defineCommand({
  meta: { name: "sync", description: "Deploy changed and new apps of DIR; --prune also removes apps not in DIR" },
  args: {
    dir: { type: "string", alias: "d", description: "directory of app directories", required: true, valueHint: "dir" },
    prune: { type: "boolean", description: "remove server apps that have no directory in DIR", default: false },
    "dry-run": { type: "boolean", description: "only show what would be done", default: false },
    ...contextArg,
  },
  async run({ args }) {
    const locals = listAppDirs(args.dir);
    const api = connect(args);
    const plan = await planSync(api, locals);
    const dry = args["dry-run"];
    const say = (s: string) => process.stdout.write(`${s}\n`);
    const would = dry ? "would " : "";
    for (const a of plan.create) say(`${would}create ${a.slug}`);
    for (const u of plan.update) say(`${would}update ${u.app.slug} (${u.what.join(" and ")} changed)`);
    for (const s of plan.extra) say(args.prune ? `${would}remove ${s}` : `keep ${s} (not in ${args.dir}; --prune removes it)`);
    if (dry) return say(`${plan.unchanged.length} unchanged`);

    const failed: string[] = [];
    let created = 0;
    let updated = 0;
    let removed = 0;
    for (const a of plan.create) {
      say(`==> creating ${a.slug}`);
      if (await step(failed, a.slug, () => deployLocal(api, a, { detach: false }))) created++;
    }
    for (const { app, what } of plan.update) {
      say(`==> updating ${app.slug} (${what.join(" and ")} changed)`);
      if (await step(failed, app.slug, () => deployLocal(api, app, { detach: false }))) updated++;
    }
    if (args.prune) {
      for (const slug of plan.extra) {
        say(`==> removing ${slug}`);
        if (await step(failed, slug, () => prune(api, slug))) removed++;
      }
    }
    const kept = args.prune ? 0 : plan.extra.length;
    say(
      `sync: ${created} created, ${updated} updated, ${plan.unchanged.length} unchanged, ${removed} removed` +
        `${kept ? `, ${kept} kept on the server only` : ""}, ${failed.length} failed`,
    );
    if (failed.length) throw new CliError(`sync: ${failed.length} failed: ${failed.join(", ")}`);
  },
});
