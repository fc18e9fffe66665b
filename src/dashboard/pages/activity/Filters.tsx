/** The filter bar of the activity list: categories (multi-select checkboxes) and an app slug. */

import { useEffect, useState } from "preact/hooks";
import { TextField } from "../../components/Field";
import { CATEGORIES } from "../../types";
import type { ListFilter } from "./filter";

const APP_DEBOUNCE_MS = 400;

/** Controls for `filter`; every change calls `onChange` with the whole new filter. */
export function Filters({ filter, onChange }: { filter: ListFilter; onChange(f: ListFilter): void }) {
  const [app, setApp] = useState(filter.app);
  useEffect(() => setApp(filter.app), [filter.app]);
  // typing settles before the list reloads
  useEffect(() => {
    if (app.trim() === filter.app) return;
    const t = setTimeout(() => onChange({ ...filter, app: app.trim() }), APP_DEBOUNCE_MS);
    return () => clearTimeout(t);
  }, [app, filter, onChange]);

  const toggle = (c: string, on: boolean) => {
    const set = new Set(filter.categories);
    if (on) set.add(c);
    else set.delete(c);
    onChange({ ...filter, categories: CATEGORIES.filter((x) => set.has(x)) });
  };

  return (
    <form
      class="card filters"
      aria-label="Filter activity"
      onSubmit={(e) => {
        e.preventDefault();
        onChange({ ...filter, app: app.trim() });
      }}
    >
      <fieldset class="categories">
        <legend>Categories</legend>
        <div class="check-chips">
          {CATEGORIES.map((c) => (
            <label key={c} class={`check-chip cat-${c}`}>
              <input
                type="checkbox"
                checked={filter.categories.includes(c)}
                onChange={(e) => toggle(c, e.currentTarget.checked)}
              />
              <span>{c}</span>
            </label>
          ))}
        </div>
      </fieldset>
      <div class="filter-row">
        <TextField
          label="App"
          class="compact"
          type="search"
          placeholder="app-slug"
          autoComplete="off"
          value={app}
          onValue={setApp}
        />
        <button
          type="button"
          class="btn"
          disabled={!filter.categories.length && !filter.app}
          onClick={() => {
            setApp("");
            onChange({ categories: [], app: "" });
          }}
        >
          Clear filters
        </button>
      </div>
    </form>
  );
}
