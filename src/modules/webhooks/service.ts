/**
 * Alert webhook destinations: CRUD with activity entries (category `webhook`), the secret sealed at rest and
 * write-only on the wire, and the dispatcher that delivers notifications and tests. `ctx.webhooks` is this service.
 */
import type { Db } from "../../db";
import type { Secrets } from "../../lib/crypto";
import { badRequest, notFound } from "../../lib/errors";
import { type Clock, iso } from "../../lib/time";
import type { Log } from "../../log/logger";
import { SECRET_MASK, type WebhookDelivery, type WebhookDestination, type WebhookKind } from "../../shared/webhooks";
import type { Actor } from "../activity/model";
import type { Activity } from "../activity/service";
import { createDispatcher, type DispatchTuning } from "./dispatch";
import { checkName, checkUrl, urlOrigin, type WebhookInput } from "./model";
import { createWebhookRepo, type DeliveryRow, type WebhookRow } from "./repo";

/** The wire form: `secret` is the mask or `""`; `url` cut to its origin for callers who may not change webhooks. */
export function webhookJson(r: WebhookRow, fullUrl: boolean): WebhookDestination {
  return {
    id: r.id,
    name: r.name,
    url: fullUrl ? r.url : urlOrigin(r.url),
    kind: r.kind as WebhookKind,
    secret: r.secretEnc ? SECRET_MASK : "",
    enabled: r.enabled,
  };
}

/** A delivery log entry as sent. */
export function deliveryJson(r: DeliveryRow): WebhookDelivery {
  return {
    id: r.id,
    event: r.event,
    status: r.status,
    duration_ms: r.durationMs,
    attempts: r.attempts,
    error: r.error,
    created_at: r.createdAt,
  };
}

/** Activity snapshots: the URL's origin only (a path may hold a token), and the secret redacted by the recorder. */
const snapshot = (r: WebhookRow) => ({ ...webhookJson(r, false) });

export interface WebhookDeps {
  db: Db;
  clock: Clock;
  secrets: Secrets;
  activity: Activity;
  log: Log;
  /** `webhooks.allow_private_destinations`. */
  allowPrivate: boolean;
  /** Resolver, timeouts, retry delays, trusted CAs, queue sizes: tests shorten or replace them. */
  tuning?: DispatchTuning;
}

const valid = <T>(v: T | { error: string }): T => {
  if (v && typeof v === "object" && "error" in v) throw badRequest(v.error);
  return v as T;
};

/** What a PUT or POST sets on the secret: undefined keeps it, null clears it, a string replaces it. */
function secretChange(secret: string | undefined): string | null | undefined {
  if (secret === undefined || secret === SECRET_MASK) return undefined;
  return secret === "" ? null : secret;
}

/** Build the webhooks service. */
export function createWebhooks({ db, clock, secrets, activity, log, allowPrivate, tuning }: WebhookDeps) {
  const repo = createWebhookRepo(db);
  const dispatcher = createDispatcher({ repo, secrets, clock, log, allowPrivate, tuning });
  const record = (actor: Actor, action: string, r: WebhookRow, before: WebhookRow | null, after: WebhookRow | null) =>
    activity.record({
      actor,
      category: "webhook",
      action,
      target: r.name,
      summary: `${actor.name} ${action.replace("webhook_", "")} webhook ${r.name} (${r.kind}, ${urlOrigin(r.url)})`,
      before: before ? snapshot(before) : null,
      after: after ? snapshot(after) : null,
    });
  const exists = (id: number) => {
    const r = repo.byId(id);
    if (!r) throw notFound();
    return r;
  };

  return {
    /** Every destination by name; `fullUrl` for callers who may change webhooks. */
    list: (fullUrl: boolean) => repo.list().map((r) => webhookJson(r, fullUrl)),

    create(input: WebhookInput, actor: Actor): WebhookDestination {
      if (input.name === undefined) throw badRequest("name is required");
      if (input.url === undefined) throw badRequest("url is required");
      const name = valid(checkName(input.name));
      const url = valid(checkUrl(input.url, allowPrivate));
      const secret = secretChange(input.secret);
      const now = iso(clock.now());
      return db.tx(() => {
        const r = repo.insert({
          name,
          url,
          kind: input.kind ?? "generic",
          secretEnc: secret ? secrets.seal(secret) : null,
          enabled: input.enabled ?? true,
          createdAt: now,
          updatedAt: now,
        });
        record(actor, "webhook_created", r, null, r);
        return webhookJson(r, true);
      });
    },

    /** Change the fields given; an omitted field keeps its value, `secret` omitted or the mask keeps the stored one. */
    update(id: number, input: WebhookInput, actor: Actor): WebhookDestination {
      const name = input.name === undefined ? undefined : valid(checkName(input.name));
      const url = input.url === undefined ? undefined : valid(checkUrl(input.url, allowPrivate));
      const secret = secretChange(input.secret);
      return db.tx(() => {
        const before = exists(id);
        const r = repo.update(id, {
          ...(name !== undefined ? { name } : {}),
          ...(url !== undefined ? { url } : {}),
          ...(input.kind !== undefined ? { kind: input.kind } : {}),
          ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
          ...(secret !== undefined ? { secretEnc: secret === null ? null : secrets.seal(secret) } : {}),
          updatedAt: iso(clock.now()),
        });
        record(actor, "webhook_updated", r, before, r);
        return webhookJson(r, true);
      });
    },

    remove(id: number, actor: Actor): void {
      db.tx(() => {
        const r = exists(id);
        repo.remove(id);
        record(actor, "webhook_removed", r, r, null);
      });
    },

    /** The newest deliveries of a destination (404 when it does not exist). */
    deliveries(id: number, limit: number, before?: number): WebhookDelivery[] {
      exists(id);
      return repo.deliveries(id, limit, before).map(deliveryJson);
    },

    ...dispatcher,
  };
}

/** The service's type (`ctx.webhooks`). */
export type Webhooks = ReturnType<typeof createWebhooks>;
