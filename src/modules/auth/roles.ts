/** The four roles, most powerful first: plain data, shared by the config schema, the server and the dashboard. */
export const ROLES = ["super_admin", "admin", "manage", "viewer"] as const;
export type Role = (typeof ROLES)[number];
