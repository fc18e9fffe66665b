/** Wire shapes of the alert webhook destinations (snake_case, as sent). */

export const WEBHOOK_KINDS = ["generic", "slack", "discord"] as const;
export type WebhookKind = (typeof WEBHOOK_KINDS)[number];

/** What a response carries in `secret` when one is stored (it is write-only). */
export const SECRET_MASK = "********";

/** POST/PUT /api/webhooks body and the response of both, and an entry of GET /api/webhooks. */
export interface WebhookDestination {
  id: number;
  name: string;
  url: string;
  kind: WebhookKind;
  /** `""` when none is set, `"********"` when one is; never the secret itself. */
  secret: string;
  enabled: boolean;
}

/** POST /api/webhooks/test */
export interface WebhookTestRequest {
  /** Test a stored destination: its url, kind and secret are used where the request leaves them out (or masks the secret). */
  id?: number;
  url: string;
  kind?: WebhookKind;
  secret?: string;
}

/** The answer of POST /api/webhooks/test: `status` 0 when no response arrived. */
export interface WebhookTestResult {
  ok: boolean;
  status: number;
  error: string;
}

/** An entry of GET /api/webhooks/{id}/deliveries, newest first. */
export interface WebhookDelivery {
  id: number;
  event: string;
  /** Status of the receiver's answer; null when none arrived. */
  status: number | null;
  duration_ms: number;
  attempts: number;
  error: string | null;
  created_at: string;
}
