/**
 * Light and dark themes. With no stored choice the page follows prefers-color-scheme (pure CSS); a choice made
 * with the toggle is stored in localStorage and set as `data-theme` on <html>.
 */
import { useEffect, useState } from "preact/hooks";

export type Theme = "light" | "dark";
export const THEME_KEY = "sundeck.theme";

const media = () => window.matchMedia("(prefers-color-scheme: dark)");

function stored(): Theme | null {
  try {
    const v = localStorage.getItem(THEME_KEY);
    return v === "light" || v === "dark" ? v : null;
  } catch {
    return null;
  }
}

/** Apply the stored choice, if any. Called before the first render so there is no flash. */
export function applyStoredTheme(): void {
  const t = stored();
  if (t) document.documentElement.dataset.theme = t;
  else delete document.documentElement.dataset.theme;
}

/** The theme in effect: the stored choice, else the system's. */
export function effectiveTheme(): Theme {
  return stored() ?? (media().matches ? "dark" : "light");
}

/** The effective theme and a setter that stores the choice. */
export function useTheme(): [Theme, (t: Theme) => void] {
  const [theme, setState] = useState<Theme>(effectiveTheme);
  useEffect(() => {
    const m = media();
    const fn = () => setState(effectiveTheme());
    m.addEventListener("change", fn);
    return () => m.removeEventListener("change", fn);
  }, []);
  const set = (t: Theme) => {
    try {
      localStorage.setItem(THEME_KEY, t);
    } catch {
      // private mode: the choice lasts for this page only
    }
    document.documentElement.dataset.theme = t;
    setState(t);
  };
  return [theme, set];
}

/**
 * The theme in effect, following both the toggle (`data-theme` on <html>, set by any component) and the system
 * setting; for canvases, which cannot take colours from CSS by themselves.
 */
export function useEffectiveTheme(): Theme {
  const [theme, setState] = useState<Theme>(effectiveTheme);
  useEffect(() => {
    const update = () => setState(effectiveTheme());
    const m = media();
    m.addEventListener("change", update);
    const mo = new MutationObserver(update);
    mo.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
    return () => {
      m.removeEventListener("change", update);
      mo.disconnect();
    };
  }, []);
  return theme;
}
