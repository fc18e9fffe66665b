/** Wire shapes of user management (snake_case, as sent). */
import type { Role } from "./roles";

/** 201 of POST /api/users (CONTRACT). */
export interface NewUser {
  id: number;
  username: string;
  role: Role;
  created_at: string;
}

/** A user with their grants: GET /api/users (each), GET and PUT /api/users/{id}, 201 of POST /api/setup. */
export interface User extends NewUser {
  updated_at: string;
  app_access: string[];
}
