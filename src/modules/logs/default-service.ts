/**
 * Which service a logs stream shows when the request names none. The spec's default is `web`; an app without one
 * would answer "no container for service web", so the default follows the app: its only service, else the first
 * one the proxy routes to, else none (the stream then names the services to choose from).
 */

/** The default service of an app with `services` (compose order) of which `routed` have endpoints; null when none is. */
export function defaultService(services: string[], routed: string[]): string | null {
  if (services.length === 0 || services.includes("web")) return "web";
  if (services.length === 1) return services[0];
  return services.find((s) => routed.includes(s)) ?? null;
}
