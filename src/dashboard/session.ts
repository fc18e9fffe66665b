/** Who is signed in, shared with every page through context. */
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Me } from "./types";

export interface Session {
  me: Me;
  /** Re-read /api/me (after a change to one's own account). */
  refresh(): Promise<void>;
  /** End the session on the server and show the login form. */
  logout(): Promise<void>;
}

export const SessionContext = createContext<Session | null>(null);

/** The signed-in session; only rendered inside the shell, so it is always there. */
export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error("useSession outside of a session");
  return s;
}

/** Whether the signed-in user is the super-admin (users, settings, process logs). */
export const isSuperAdmin = (me: { role: string }) => me.role === "super_admin";

/** Whether the user may change apps (deploy, lifecycle, env); viewers only read. Grants are checked by the server. */
export const mayMutateApps = (me: { role: string }) => me.role !== "viewer";
