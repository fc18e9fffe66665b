/**
 * Under an app made from a template: when the catalog holds a newer version of it, a note saying so and, on request,
 * the line diff from the app's compose file to the new template's text. Nothing is upgraded: the user copies what
 * they want into the Compose tab.
 */
import { useState } from "preact/hooks";
import { api } from "../../api";
import { LineDiff } from "../../components/DiffView";
import { ErrorText } from "../../components/Field";
import { useResource } from "../../hooks";
import { Link } from "../../router";
import { type TemplateDetail, templatesApi, templateUpdate } from "../../templates";
import { tabHref } from "./tabs";

function Changes({ slug, id }: { slug: string; id: string }) {
  const both = useResource(() => Promise.all([api.apps.compose(slug), templatesApi.get(id)]), [slug, id]);
  if (both.error) return <ErrorText error={both.error} />;
  if (!both.data) return <p class="muted small">Loading…</p>;
  const [mine, t]: [{ compose: string }, TemplateDetail] = both.data;
  return (
    <>
      <p class="small muted">
        From this app's compose file (−) to the text of {t.name} version {t.version} (+). The template's text reads its variables
        as{" "}
        <code>
          {"$"}
          {"{KEY}"}
        </code>{" "}
        and carries no routing labels.
      </p>
      <LineDiff before={mine.compose} after={t.compose} />
    </>
  );
}

/** The note, or nothing. */
export function TemplateNotice({ slug, template }: { slug: string; template: { id: string; version: number } | null }) {
  const catalog = useResource(() => (template ? templatesApi.list() : Promise.resolve([])), [template?.id]);
  const [open, setOpen] = useState(false);
  const update = templateUpdate(template, catalog.data ?? []);
  if (update.kind !== "newer") return null;
  return (
    <section class="notice warn template-update" aria-label="Template update">
      <p>
        The catalog holds version {update.template.version} of {update.template.name}; this app was made from version{" "}
        {update.from}. Nothing changes by itself: apply what you want in the{" "}
        <Link href={tabHref(slug, "compose")}>Compose tab</Link>.{" "}
        <button type="button" class="btn small" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? "Hide changes" : "Show changes"}
        </button>
      </p>
      {open && <Changes slug={slug} id={update.template.id} />}
    </section>
  );
}
