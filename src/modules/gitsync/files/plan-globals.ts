/**
 * `_global.yml` beyond its alert rules is mirrored, not imported: users and roles (a remote is only as strong as
 * its weakest pusher, so it never creates users or raises anyone), registries and webhooks (their credentials stay
 * on this server, and a changed address would send them, or alert payloads, elsewhere). Differences are refusals.
 */
import type { Ctx } from "../../../context";
import { globalData } from "./export";
import { GLOBAL_FILE } from "./paths";
import type { ImportPlan } from "./plan-types";
import type { GlobalData } from "./schema";
import { canon } from "./shapes";

type Named = { [k: string]: unknown };

/** Names whose entries differ between `here` and `there` (present on one side only included). */
function differing(here: Named[], there: Named[], key: string): string[] {
  const a = new Map(here.map((x) => [String(x[key]), canon(x)]));
  const b = new Map(there.map((x) => [String(x[key]), canon(x)]));
  return [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k)).sort();
}

/** Add the refusals of the users, registries and webhooks `remote` changes. */
export function planGlobals(ctx: Ctx, plan: ImportPlan, remote: GlobalData) {
  const local = globalData(ctx);
  const file = GLOBAL_FILE;
  for (const name of differing(local.users, remote.users, "username")) {
    const here = local.users.find((u) => u.username === name);
    const there = remote.users.find((u) => u.username === name);
    const reason = !here
      ? "git sync never creates users"
      : !there
        ? "git sync never removes users"
        : `git sync never changes roles (the file says ${there.role}, the user is ${here.role})`;
    plan.refused.push({ file, what: `user ${name}`, reason });
  }
  for (const name of differing(local.registries, remote.registries, "name"))
    plan.refused.push({
      file,
      what: `registry ${name}`,
      reason: "registries are not imported: their credentials stay on this server",
    });
  for (const name of differing(local.webhooks, remote.webhooks, "name"))
    plan.refused.push({
      file,
      what: `webhook ${name}`,
      reason: "webhooks are not imported: their addresses and secrets stay on this server",
    });
}
