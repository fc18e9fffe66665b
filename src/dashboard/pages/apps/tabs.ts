/** The app page's tabs, in order, and their URLs (`/apps/blog?tab=traffic`; the first tab has no query). */

export const TABS = [
  { id: "services", label: "Services" },
  { id: "endpoints", label: "Endpoints" },
  { id: "traffic", label: "Traffic" },
  { id: "metrics", label: "Metrics" },
  { id: "backups", label: "Backups" },
  { id: "deploy", label: "Deploy" },
  { id: "versions", label: "Versions" },
  { id: "compose", label: "Compose" },
  { id: "env", label: "Env" },
  { id: "logs", label: "Logs" },
  { id: "activity", label: "Activity" },
] as const;

export type TabId = (typeof TABS)[number]["id"];

/** The URL of a tab of an app. */
export const tabHref = (slug: string, tab: TabId) =>
  `/apps/${encodeURIComponent(slug)}${tab === "services" ? "" : `?tab=${tab}`}`;
