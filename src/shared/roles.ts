/** The four roles, most powerful first: plain data shared by the config schema, the server, the dashboard and the CLI. */
export const ROLES = ["super_admin", "admin", "manage", "viewer"] as const;

/** One of ROLES. */
export type Role = (typeof ROLES)[number];
