/**
 * A tiny History API router: the current location as a hook, navigation, and path patterns with `:params`.
 * The server answers index.html for every non-API path, so deep links and reloads land on the right page.
 */
import { type AnchorHTMLAttributes, createElement, type TargetedMouseEvent } from "preact";
import { useEffect, useState } from "preact/hooks";

export interface Location {
  path: string;
  query: URLSearchParams;
}

const listeners = new Set<() => void>();
const notify = () => {
  for (const fn of listeners) fn();
};
if (typeof window !== "undefined") window.addEventListener("popstate", notify);

const current = (): Location => ({ path: location.pathname, query: new URLSearchParams(location.search) });

/** Go to `to` (path and query) inside the dashboard. `replace` keeps the history entry (filters, redirects). */
export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (to === location.pathname + location.search) return;
  if (opts.replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  notify();
  if (!opts.replace) window.scrollTo(0, 0);
}

/** The current location; re-renders on every navigation. */
export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const fn = () => setLoc(current());
    listeners.add(fn);
    return () => {
      listeners.delete(fn);
    };
  }, []);
  return loc;
}

/** Match `path` against a pattern such as `/activity/:id`; the params, or null. */
export function matchRoute(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split("/").filter(Boolean);
  const got = path.split("/").filter(Boolean);
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(":")) params[want[i].slice(1)] = decodeURIComponent(got[i]);
    else if (want[i] !== got[i]) return null;
  }
  return params;
}

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { href: string };

/** An anchor that navigates without a page load (modified clicks still open new tabs). */
export function Link(props: LinkProps) {
  const onClick = (e: TargetedMouseEvent<HTMLAnchorElement>) => {
    (props.onClick as ((e: TargetedMouseEvent<HTMLAnchorElement>) => void) | undefined)?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.href);
  };
  return createElement("a", { ...props, onClick });
}
