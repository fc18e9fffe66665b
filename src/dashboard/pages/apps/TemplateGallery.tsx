/**
 * The template gallery of the New app page: the embedded catalog (nothing fetched from elsewhere, so it works
 * offline) with a search box and category filters; each card opens the deploy wizard.
 */
import { useMemo, useState } from "preact/hooks";
import { ErrorText } from "../../components/Field";
import { useResource } from "../../hooks";
import { Link } from "../../router";
import { categoriesOf, filterTemplates, iconSrc, type TemplateSummary, templatesApi } from "../../templates";

/** The wizard's URL for a template. */
export const wizardHref = (id: string) => `/new-app?template=${encodeURIComponent(id)}`;

function TemplateCard({ t }: { t: TemplateSummary }) {
  return (
    <li class="card template-card">
      <img class="template-icon" src={iconSrc(t.icon)} alt="" width={40} height={40} />
      <div class="template-text">
        <h3 class="template-name">
          <Link href={wizardHref(t.id)} aria-label={`Deploy ${t.name}`}>
            {t.name}
          </Link>
        </h3>
        <p class="muted small">{t.description}</p>
        <p class="template-meta small">
          <span class="badge cat">{t.category}</span>
          {t.services.length > 1 && <span class="muted">{t.services.length} services</span>}
          {!t.web && <span class="muted">no web page</span>}
        </p>
      </div>
    </li>
  );
}

/** The gallery. */
export function TemplateGallery() {
  const list = useResource(() => templatesApi.list());
  const [query, setQuery] = useState("");
  const [category, setCategory] = useState("");
  const all = list.data ?? [];
  const cats = useMemo(() => categoriesOf(all), [all]);
  const shown = useMemo(() => filterTemplates(all, query, category), [all, query, category]);

  return (
    <section aria-label="Templates" class="template-gallery">
      <div class="gallery-tools">
        <div class="field gallery-search">
          <label for="template-search">Search templates</label>
          <input
            id="template-search"
            type="search"
            value={query}
            placeholder="git, database, wiki…"
            onInput={(e) => setQuery(e.currentTarget.value)}
            autoComplete="off"
          />
        </div>
        <ul class="chips gallery-cats" aria-label="Categories">
          <li>
            <button type="button" class="btn small" aria-pressed={category === ""} onClick={() => setCategory("")}>
              All <span class="muted">{all.length}</span>
            </button>
          </li>
          {cats.map((c) => (
            <li key={c.category}>
              <button
                type="button"
                class="btn small"
                aria-pressed={category === c.category}
                onClick={() => setCategory(category === c.category ? "" : c.category)}
              >
                {c.category} <span class="muted">{c.count}</span>
              </button>
            </li>
          ))}
        </ul>
      </div>
      <ErrorText error={list.error} />
      {!list.data && list.loading && <p class="muted">Loading…</p>}
      {list.data && shown.length === 0 && <p class="muted">No template matches “{query}”.</p>}
      <ul class="template-grid" aria-label="Template list">
        {shown.map((t) => (
          <TemplateCard key={t.id} t={t} />
        ))}
      </ul>
    </section>
  );
}
