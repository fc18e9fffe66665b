/** The plan of an import: changes to apply through the services, and what the remote asked for that is refused. */
import { HttpError } from "../../../lib/errors";
import type { RuleBody, RuleInput } from "../../alerts/model";
import type { ConfigInput } from "../../backups/model";

interface Base {
  /** The file that asked for it. */
  file: string;
  /** One line for logs and the Git Sync page. */
  summary: string;
}

/** One change the import makes. */
export type Change = Base &
  (
    | { kind: "alert_rule"; op: "create"; scope: string | null; body: typeof RuleBody.static }
    | { kind: "alert_rule"; op: "update"; scope: string | null; id: number; patch: RuleInput }
    | { kind: "alert_rule"; op: "delete"; scope: string | null; id: number }
    | { kind: "backup_config"; op: "create"; slug: string; input: ConfigInput }
    | { kind: "backup_config"; op: "update"; slug: string; id: number; input: ConfigInput }
    | { kind: "backup_config"; op: "delete"; slug: string; id: number }
    | { kind: "grant"; op: "revoke"; slug: string; userId: number; username: string }
  );

/** Something the remote asked for that is not done, and why. */
export interface Refusal {
  file: string;
  what: string;
  reason: string;
}

export interface ImportPlan {
  changes: Change[];
  refused: Refusal[];
  /** Apps whose sidecar waits for the app to be deployed (import again after the reconcile). */
  deferred: string[];
}

/** The reason of a service's 400, or the message. */
export const reasonOf = (e: unknown) => (e instanceof HttpError ? (e.reason ?? e.message) : (e as Error).message);
