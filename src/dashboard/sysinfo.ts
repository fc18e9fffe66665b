/** GET /api/system/info, fetched once per page load and shared: the server's version and TLS mode do not change while it runs. */
import { api } from "./api";
import { type Resource, useResource } from "./hooks";
import type { SystemInfo } from "./types";

let cached: Promise<SystemInfo> | null = null;

/** The server's info; a failed call is not cached, so the next caller tries again. */
export function systemInfo(): Promise<SystemInfo> {
  cached ??= api.systemInfo().catch((e) => {
    cached = null;
    throw e;
  });
  return cached;
}

/** The server's info as a resource. */
export function useSystemInfo(): Resource<SystemInfo> {
  return useResource(systemInfo, []);
}
