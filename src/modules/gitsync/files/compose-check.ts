/**
 * A compose file from the remote passes exactly the checks of an API deploy (the deployer's `validate`: every safety
 * rule, then the registries its label names) before the reconciler may run it.
 */
import { ComposeError } from "../../../compose/model";
import type { Ctx } from "../../../context";
import { checkSlug } from "../../apps/slug";
import { reasonOf } from "./plan-types";

export type ComposeVerdict = { ok: true } | { ok: false; rule: string; service: string | null; message: string };

/** Check `<slug>/docker-compose.yml` and its `.env` as they came from the remote. */
export function checkRemoteCompose(ctx: Ctx, slug: string, text: string, envText: string): ComposeVerdict {
  try {
    checkSlug(slug, "slug");
    ctx.deployer.validate(slug, text, envText);
    return { ok: true };
  } catch (e) {
    if (e instanceof ComposeError) return { ok: false, rule: e.rule, service: e.service, message: reasonOf(e) };
    return { ok: false, rule: "invalid", service: null, message: reasonOf(e) };
  }
}
