/**
 * Delivering notifications: `notify` queues one job per destination and returns at once; a few workers send them
 * through the SSRF-safe client with retries and log each outcome per destination. The queue is bounded: past it a
 * delivery is dropped and the drop is logged. `test` sends one attempt and answers `{ok, status, error}`.
 */
import type { Secrets } from "../../lib/crypto";
import { badRequest, notFound } from "../../lib/errors";
import { type Clock, iso } from "../../lib/time";
import type { Log } from "../../log/logger";
import type { AlertNotification } from "../../shared/alerts";
import { SECRET_MASK, type WebhookKind, type WebhookTestResult } from "../../shared/webhooks";
import type { ExchangeLimits } from "./exchange";
import { checkUrl, type TestInput, urlOrigin } from "./model";
import { render, testNotification } from "./payloads";
import type { WebhookRepo, WebhookRow } from "./repo";
import { createSafeHttp, type PostResult, RETRY_DELAYS_MS, type Resolver, withRetries } from "./safe-http";

/** What tests (and nothing else) change about delivery. */
export interface DispatchTuning {
  resolve?: Resolver;
  limits?: Partial<ExchangeLimits>;
  retryDelaysMs?: number[];
  /** Deliveries sent at once. */
  concurrency?: number;
  /** Deliveries waiting at most; more are dropped. */
  queueMax?: number;
}

export interface DispatchDeps {
  repo: WebhookRepo;
  secrets: Secrets;
  clock: Clock;
  log: Log;
  allowPrivate: boolean;
  tuning?: DispatchTuning;
}

interface Job {
  webhookId: number;
  notification: AlertNotification;
}

/** Build the dispatcher. */
export function createDispatcher({ repo, secrets, clock, log, allowPrivate, tuning = {} }: DispatchDeps) {
  const http = createSafeHttp({ allowPrivate, resolve: tuning.resolve, limits: tuning.limits });
  const delays = tuning.retryDelaysMs ?? RETRY_DELAYS_MS;
  const concurrency = tuning.concurrency ?? 4;
  const queueMax = tuning.queueMax ?? 500;
  const queue: Job[] = [];
  const wakers = new Set<() => void>();
  const idlers: Array<() => void> = [];
  let running = 0;
  let stopped = false;

  const secretOf = (r: WebhookRow) => (r.secretEnc ? secrets.open(r.secretEnc) : null);

  /** A retry wait that a stop cuts short. */
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      wakers.add(wake);
    });

  const logDelivery = (webhookId: number, event: string, r: PostResult, attempts: number, durationMs: number) => {
    try {
      repo.logDelivery({
        webhookId,
        event,
        status: r.status || null,
        durationMs,
        attempts,
        error: r.ok ? null : r.error,
        createdAt: iso(clock.now()),
      });
    } catch (e) {
      // the database closes at shutdown while a delivery may still be finishing
      log.warn("webhook delivery not logged", { webhook: webhookId, error: (e as Error).message });
    }
  };

  async function deliver(job: Job): Promise<void> {
    const r = repo.byId(job.webhookId);
    if (!r?.enabled) return;
    const started = performance.now();
    const { result, attempts } = await withRetries(
      () => {
        if (stopped)
          return Promise.resolve<PostResult>({ ok: false, status: 0, error: "server stopping", address: null, retry: false });
        const { body, headers } = render(r.kind as WebhookKind, job.notification, secretOf(r), clock.now());
        return http.post(r.url, body, headers);
      },
      delays,
      sleep,
    );
    const fields = { webhook: r.id, name: r.name, destination: urlOrigin(r.url), event: job.notification.event, attempts };
    if (result.ok) log.info("webhook delivered", { ...fields, status: result.status });
    else log.warn("webhook delivery failed", { ...fields, status: result.status, error: result.error });
    logDelivery(r.id, job.notification.event, result, attempts, Math.round(performance.now() - started));
  }

  const settle = () => {
    if (running === 0 && queue.length === 0) for (const f of idlers.splice(0)) f();
  };

  const idle = (): Promise<void> =>
    new Promise((resolve) => {
      idlers.push(resolve);
      settle();
    });

  const pump = () => {
    while (running < concurrency && queue.length > 0) {
      const job = queue.shift()!;
      running++;
      void deliver(job)
        .catch((e) => log.error("webhook delivery crashed", { webhook: job.webhookId, error: (e as Error).message }))
        .finally(() => {
          running--;
          pump();
          settle();
        });
    }
  };

  return {
    /** Log the loud warning the spec asks for when private destinations are allowed (server start). */
    start(): void {
      if (allowPrivate) {
        log.warn(
          "WARNING: webhooks.allow_private_destinations is on: alert webhooks may reach private, loopback and LAN addresses of this host's networks",
        );
      }
    },

    /**
     * Queue `notification` for each enabled destination among `webhookIds` and return at once. Unknown and disabled
     * ids are skipped; a full queue drops the delivery and logs it.
     */
    notify(webhookIds: readonly number[], notification: AlertNotification): void {
      if (stopped) return;
      for (const webhookId of new Set(webhookIds)) {
        const r = repo.byId(webhookId);
        if (!r?.enabled) continue;
        if (queue.length >= queueMax) {
          log.warn("webhook queue full, delivery dropped", { webhook: webhookId, event: notification.event });
          const dropped = { ok: false, status: 0, error: "dropped: delivery queue full", address: null, retry: false };
          logDelivery(webhookId, notification.event, dropped, 0, 0);
          continue;
        }
        queue.push({ webhookId, notification });
      }
      pump();
    },

    /**
     * POST /api/webhooks/test: one attempt, no retries. With `id`, the stored destination's url, kind and secret are
     * used unless the request gives them, and the outcome is logged as a `test` delivery.
     */
    async test(input: TestInput): Promise<WebhookTestResult> {
      const stored = input.id !== undefined ? repo.byId(input.id) : undefined;
      if (input.id !== undefined && !stored) throw notFound();
      const urlText = input.url ?? stored?.url;
      if (urlText === undefined) throw badRequest("url is required");
      // an IP literal the policy refuses is answered as a failed test, like any refused delivery
      const syntax = checkUrl(urlText, true);
      if (typeof syntax !== "string") throw badRequest(syntax.error);
      const kind = input.kind ?? (stored?.kind as WebhookKind | undefined) ?? "generic";
      const secret =
        input.secret === undefined || input.secret === SECRET_MASK ? (stored ? secretOf(stored) : null) : input.secret || null;
      const now = clock.now();
      const { body, headers } = render(kind, testNotification(iso(now)), secret, now);
      const started = performance.now();
      const result = await http.post(syntax, body, headers);
      if (stored) logDelivery(stored.id, "test", result, 1, Math.round(performance.now() - started));
      return { ok: result.ok, status: result.status, error: result.error };
    },

    /** Resolves when nothing is queued or being sent (tests, shutdown). */
    idle,

    /** Stop taking work: queued deliveries are dropped, retry waits end, in-flight attempts get `graceMs` to finish. */
    async stop(graceMs = 2_000): Promise<void> {
      stopped = true;
      if (queue.length > 0) log.warn("webhook deliveries dropped at shutdown", { count: queue.length });
      queue.length = 0;
      for (const wake of [...wakers]) wake();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([idle(), new Promise<void>((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
    },
  };
}

/** The dispatcher's type. */
export type Dispatcher = ReturnType<typeof createDispatcher>;
