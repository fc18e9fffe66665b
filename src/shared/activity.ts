/**
 * Activity vocabulary: categories and actor sources, plain data shared by the server and the dashboard bundle.
 * The entry shapes are TypeBox schemas in schemas/activity.ts (clients import their types only).
 */

/** Every category an entry can have (SPEC's resources), in the order the dashboard's filter lists them. */
export const CATEGORIES = [
  "compose",
  "endpoint",
  "backup",
  "alert",
  "webhook",
  "registry",
  "access",
  "deploy",
  "lifecycle",
  "auth",
  "system",
] as const;
export type Category = (typeof CATEGORIES)[number];

/** Where a change came from (CONTRACT: activity wire values). */
export const ACTOR_SOURCES = ["ui", "api", "cli", "git_sync", "system"] as const;
export type ActorSource = (typeof ACTOR_SOURCES)[number];
