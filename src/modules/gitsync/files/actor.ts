/**
 * Who git sync acts as: changes pulled from the remote are recorded with actor_source `git_sync` (CONTRACT), and
 * the services that check a caller's role see an admin (every app, no users or system settings).
 */
import type { Principal } from "../../../shared/principal";
import type { Actor } from "../../activity/model";

/** The actor of a change applied from the remote; `name` is what the activity log shows (e.g. the commit author). */
export function gitSyncActor(name = "git-sync"): Actor {
  return { userId: null, name, source: "git_sync", ip: null };
}

/** The caller the alert service sees: an admin, the least role that reads and changes every app's rules. */
export const SYNC_PRINCIPAL: Principal = Object.freeze({
  user: Object.freeze({ id: 0, username: "git-sync", role: "admin" as const, tokenVersion: 0 }),
  via: "apikey" as const,
  credential: "",
});
