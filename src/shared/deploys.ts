/** Wire shapes of deploys, actions and kept versions (snake_case, as sent): one declaration for server and clients. */

/** Where a deploy or action stands. */
export type DeployStatus = "running" | "succeeded" | "failed" | "cancelled" | "interrupted";

/** A deploy or lifecycle action: GET /api/apps/{slug}/deploys (each) and /api/apps/{slug}/deploys/{id}. */
export interface DeployRecord {
  id: number;
  /** up, pull, rollback, start, stop, restart, scale, down */
  action: string;
  status: DeployStatus;
  error: string | null;
  version_id: number | null;
  source: string;
  started_at: string;
  finished_at: string | null;
  /** How each service was replaced (`rolling` or `recreate`, with the reason); null when the action replaced none. */
  strategies: Record<string, { strategy: "rolling" | "recreate"; reason: string }> | null;
}

/** The last deploy of an app, as its view carries it. */
export type LastDeploy = Pick<DeployRecord, "id" | "action" | "status" | "error" | "started_at" | "finished_at">;

/** 202 of a deploy, a removal and every action that runs as a deploy. */
export interface Accepted {
  slug: string;
  deploy_id: number | null;
}

/** 202 of POST /api/apps/{slug}/cancel: whether anything was running or waiting to cancel. */
export interface CancelAccepted {
  slug: string;
  cancelled: boolean;
}

/** What a deploy log frame reports on. */
export type DeployFrameAction = "pull" | "up" | "down" | "restart" | "scale" | "none";

/** SPEC's deploy log frame, sent on /api/apps/{slug}/deploy-logs. */
export interface DeployFrame {
  timestamp: string;
  action: DeployFrameAction;
  output: string;
  /** True on the final frame; the server then closes the socket. */
  done: boolean;
}

/** An entry of GET /api/apps/{slug}/versions. */
export interface AppVersion {
  id: number;
  version: number;
  hash: string;
  source: string;
  created_by: string;
  /** good (deployed and stable), failed, or null (never finished a deploy). */
  status: "good" | "failed" | null;
  current: boolean;
  created_at: string;
}

/** GET /api/apps/{slug}/versions/{id}: env values are null for viewers. */
export interface AppVersionDetail extends AppVersion {
  compose: string;
  env: Record<string, string | null>;
}
