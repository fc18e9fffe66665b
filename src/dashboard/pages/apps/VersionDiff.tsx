/** The compose line diff of two kept versions, and which env names changed (values are never shown here). */
import { api } from "../../api";
import { LineDiff } from "../../components/DiffView";
import { ErrorText } from "../../components/Field";
import { Icon } from "../../components/icons";
import { diffFields, diffLines } from "../../diff";
import { useResource } from "../../hooks";
import type { AppVersionDetail } from "../../types";

function EnvChanges({ a, b }: { a: AppVersionDetail; b: AppVersionDetail }) {
  const changes = diffFields(a.env, b.env).filter((c) => c.kind !== "same");
  if (changes.length === 0) return <p class="muted small">Env: no change.</p>;
  const names = (kind: string) =>
    changes
      .filter((c) => c.kind === kind)
      .map((c) => c.path)
      .join(", ");
  return (
    <p class="small env-changes">
      Env:{" "}
      {(["added", "removed", "changed"] as const)
        .filter((k) => names(k))
        .map((k) => (
          <span key={k} class={`chip chip-${k}`}>
            {k} {names(k)}
          </span>
        ))}
    </p>
  );
}

/** Version `from` → version `to`. */
export function VersionDiff({ slug, from, to, onClose }: { slug: string; from: number; to: number; onClose(): void }) {
  const pair = useResource(() => Promise.all([api.apps.version(slug, from), api.apps.version(slug, to)]), [slug, from, to]);
  const [a, b] = pair.data ?? [];
  const same = a && b && a.compose === b.compose;
  const ops = a && b ? diffLines(a.compose, b.compose) : [];
  const added = ops.filter((o) => o.kind === "add").length;
  const removed = ops.filter((o) => o.kind === "del").length;
  return (
    <section class="card version-diff" aria-label="Version diff">
      <div class="card-head">
        <h2>{a && b ? `Version ${a.version} → version ${b.version}` : "Comparing versions…"}</h2>
        <button type="button" class="icon-btn small" aria-label="Close the diff" onClick={onClose}>
          <Icon name="x" />
        </button>
      </div>
      <ErrorText error={pair.error} />
      {a && b && (
        <>
          <p class="diff-summary">
            <span class="chip chip-added">{added} lines added</span>
            <span class="chip chip-removed">{removed} lines removed</span>
          </p>
          <EnvChanges a={a} b={b} />
          {same ? <p class="muted">The compose files are identical.</p> : <LineDiff before={a.compose} after={b.compose} />}
        </>
      )}
    </section>
  );
}
