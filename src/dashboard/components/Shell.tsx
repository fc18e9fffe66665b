/** The frame around every signed-in page: header with navigation, theme toggle and user menu; the page below. */
import type { ComponentChildren } from "preact";
import { mayReadGitSync } from "../gitsync";
import { Link, useLocation } from "../router";
import { isSuperAdmin, useSession } from "../session";
import type { Me } from "../types";
import { Icon } from "./icons";
import { ThemeToggle } from "./ThemeToggle";
import { UserMenu } from "./UserMenu";

interface NavItem {
  href: string;
  label: string;
  superOnly?: boolean;
  /** Who sees it, when not everyone. */
  may?: (me: Me) => boolean;
  /** Other paths (and their subpaths) that belong to this item. */
  also?: string[];
}

/** Pages in the navigation; super-admin pages are hidden from everyone else. */
export const NAV: NavItem[] = [
  { href: "/", label: "Overview" },
  { href: "/apps", label: "Apps", also: ["/new-app"] },
  { href: "/alerts", label: "Alerts" },
  { href: "/webhooks", label: "Webhooks" },
  { href: "/activity", label: "Activity" },
  { href: "/git", label: "Git Sync", may: mayReadGitSync },
  { href: "/apikeys", label: "API keys" },
  { href: "/users", label: "Users", superOnly: true },
  { href: "/settings", label: "Settings", superOnly: true },
  { href: "/logs", label: "Process logs", superOnly: true },
];

const under = (href: string, path: string) => (href === "/" ? path === "/" : path === href || path.startsWith(`${href}/`));
const active = (n: NavItem, path: string) => under(n.href, path) || (n.also ?? []).some((h) => under(h, path));

/** The shell. */
export function Shell({ children }: { children: ComponentChildren }) {
  const { me } = useSession();
  const { path } = useLocation();
  const items = NAV.filter((n) => (!n.superOnly || isSuperAdmin(me)) && (!n.may || n.may(me)));
  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <Link href="/" class="brand">
          <Icon name="logo" />
          <span>Sundeck</span>
        </Link>
        <nav class="nav" aria-label="Main">
          <ul>
            {items.map((n) => (
              <li key={n.href}>
                <Link href={n.href} aria-current={active(n, path) ? "page" : undefined}>
                  {n.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="topbar-tools">
          <ThemeToggle />
          <UserMenu />
        </div>
      </header>
      <main id="main" class="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
