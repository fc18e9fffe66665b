/** Wire shapes of sign-in and of the caller's identity (snake_case, as sent). */
import type { Role } from "./roles";

/** GET /api/setup/status */
export interface SetupStatus {
  needs_setup: boolean;
}

/** 200 of POST /api/auth/login. */
export interface SignedIn {
  id: number;
  username: string;
  role: Role;
}

/** GET /api/me: the caller and the apps granted to them. */
export interface Me extends SignedIn {
  app_access: string[];
}
