/** Wire shapes of the API as the dashboard reads them (snake_case, as sent). */

import type { ActivityRow } from "../modules/activity/repo";
import type { Role } from "../modules/auth/roles";

export { CATEGORIES, type Category } from "../modules/activity/categories";
export { ROLES, type Role } from "../modules/auth/roles";

/** Human names of the roles. */
export const ROLE_LABELS: Record<Role, string> = {
  super_admin: "Super admin",
  admin: "Admin",
  manage: "Manage",
  viewer: "Viewer",
};

/** GET /api/me */
export interface Me {
  id: number;
  username: string;
  role: Role;
  app_access: string[];
}

/** GET /api/system/info */
export interface SystemInfo {
  version: string;
  commit: string;
  tls_mode: string;
  domain: string | null;
}

/** An entry of GET /api/users */
export interface User {
  id: number;
  username: string;
  role: Role;
  created_at: string;
  updated_at: string;
  app_access: string[];
}

/** An entry of GET /api/apikeys */
export interface ApiKey {
  id: number;
  name: string;
  prefix: string;
  username?: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

/** POST /api/apikeys: the only time the key itself is sent. */
export interface CreatedApiKey {
  id: number;
  name: string;
  key: string;
  created_at: string;
  expires_at: string | null;
}

/** One activity entry as the list routes return it (the server's row type). */
export type ActivityEntry = ActivityRow;

/** GET /api/activity/{id} */
export interface ActivityDetail extends ActivityEntry {
  before_json: unknown;
  after_json: unknown;
}

/** The cursor-paginated list envelope. */
export interface ActivityPage {
  entries: ActivityEntry[];
  next_before: number | null;
}

/** Filters of the activity list. */
export interface ActivityFilter {
  categories?: string[];
  app?: string;
  limit?: number;
  before?: number | null;
}
