/** The dashboard's pages by path (client side); super-admin pages answer "not available" to other roles. */
import type { ComponentChildren } from "preact";
import { mayReadGitSync } from "../gitsync";
import { matchRoute } from "../router";
import { isSuperAdmin } from "../session";
import type { Me } from "../types";
import { ActivityPage } from "./activity/ActivityPage";
import { EntryPage } from "./activity/EntryPage";
import { AlertsPage } from "./alerts/AlertsPage";
import { ApiKeysPage } from "./apikeys/ApiKeysPage";
import { AppPage } from "./apps/AppPage";
import { AppsPage } from "./apps/AppsPage";
import { NewAppPage } from "./apps/NewAppPage";
import { Forbidden, NotFound } from "./Forbidden";
import { GitSyncPage } from "./gitsync/GitSyncPage";
import { ProcessLogsPage } from "./logs/ProcessLogsPage";
import { Overview } from "./Overview";
import { Settings } from "./Settings";
import { UsersPage } from "./users/UsersPage";
import { WebhooksPage } from "./webhooks/WebhooksPage";

interface Route {
  pattern: string;
  title: string | ((params: Record<string, string>) => string);
  superOnly?: boolean;
  /** Who may open it, when not everyone (others get "Not available"). */
  may?: (me: Me) => boolean;
  render(params: Record<string, string>): ComponentChildren;
}

export const ROUTES: Route[] = [
  { pattern: "/", title: "Overview", render: () => <Overview /> },
  { pattern: "/apps", title: "Apps", render: () => <AppsPage /> },
  { pattern: "/new-app", title: "New app", render: () => <NewAppPage /> },
  { pattern: "/apps/:slug", title: (p) => p.slug, render: (p) => <AppPage key={p.slug} slug={p.slug} /> },
  { pattern: "/alerts", title: "Alerts", render: () => <AlertsPage /> },
  { pattern: "/webhooks", title: "Webhooks", render: () => <WebhooksPage /> },
  { pattern: "/activity", title: "Activity", render: () => <ActivityPage /> },
  { pattern: "/activity/:id", title: "Activity entry", render: (p) => <EntryPage id={p.id} /> },
  { pattern: "/git", title: "Git Sync", may: mayReadGitSync, render: () => <GitSyncPage /> },
  { pattern: "/apikeys", title: "API keys", render: () => <ApiKeysPage /> },
  { pattern: "/users", title: "Users", superOnly: true, render: () => <UsersPage /> },
  { pattern: "/settings", title: "Settings", superOnly: true, render: () => <Settings /> },
  { pattern: "/logs", title: "Process logs", superOnly: true, render: () => <ProcessLogsPage /> },
];

/** The page for `path` as seen by `me`, with its title. */
export function resolvePage(path: string, me: Me): { title: string; node: ComponentChildren; key: string } {
  const clean = path.length > 1 ? path.replace(/\/+$/, "") : path;
  for (const r of ROUTES) {
    const params = matchRoute(r.pattern, clean);
    if (!params) continue;
    if ((r.superOnly && !isSuperAdmin(me)) || (r.may && !r.may(me)))
      return { title: "Not available", node: <Forbidden />, key: "forbidden" };
    return { title: typeof r.title === "string" ? r.title : r.title(params), node: r.render(params), key: r.pattern };
  }
  return { title: "Not found", node: <NotFound />, key: "not-found" };
}
