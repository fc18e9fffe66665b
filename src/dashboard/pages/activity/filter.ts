/** The activity filter as it lives in the URL (`?categories=a,b&app=slug`), so filtered views can be shared. */
import { CATEGORIES } from "../../types";

export interface ListFilter {
  categories: string[];
  app: string;
}

/** Read the filter from the query string; unknown categories are dropped. */
export function filterFromQuery(q: URLSearchParams): ListFilter {
  const categories = (q.get("categories") ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((c) => (CATEGORIES as readonly string[]).includes(c));
  return { categories, app: (q.get("app") ?? "").trim() };
}

/** The list URL of a filter. */
export function filterUrl(f: ListFilter): string {
  const q = new URLSearchParams();
  if (f.categories.length) q.set("categories", f.categories.join(","));
  if (f.app) q.set("app", f.app);
  const s = q.toString().replace(/%2C/g, ",");
  return s ? `/activity?${s}` : "/activity";
}

let lastList = "/activity";

/** Remember the list URL (with its filter) so the detail page can link back to it. */
export function rememberList(url: string): void {
  lastList = url;
}

/** The list URL last shown. */
export function lastListUrl(): string {
  return lastList;
}
