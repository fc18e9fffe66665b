/** Activity categories and actor sources: plain data, shared by the server and the dashboard bundle. */

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

export const ACTOR_SOURCES = ["ui", "api", "cli", "git_sync", "system"] as const;
export type ActorSource = (typeof ACTOR_SOURCES)[number];
