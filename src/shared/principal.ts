/**
 * A signed-in caller, as the auth module resolves it and the stream plumbing (http/) carries it: the user behind a
 * session cookie or an API key. Shared so that http/ needs nothing from modules/.
 */
import type { Role } from "./roles";

/** A signed-in caller: the user behind a session cookie or an API key. */
export interface Principal {
  user: { id: number; username: string; role: Role; tokenVersion: number };
  via: "session" | "apikey";
  apiKeyId?: number;
  /** The raw credential, kept to re-check long-lived sockets. */
  credential: string;
}
