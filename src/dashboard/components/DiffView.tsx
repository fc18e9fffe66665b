/** Before/after of an activity entry, field by field; changed multi-line values get a line diff. */
import { diffFields, diffLines, type FieldChange, showValue, wantsLineDiff } from "../diff";

const KIND_LABEL = { added: "added", removed: "removed", changed: "changed", same: "unchanged" } as const;

/** A line diff of two values (texts as they are, anything else as indented JSON). */
export function LineDiff({ before, after }: { before: unknown; after: unknown }) {
  const ops = diffLines(showValue(before), showValue(after));
  return (
    <pre class="line-diff">
      {ops.map((op, i) => (
        <span key={i} class={`line line-${op.kind}`}>
          <span class="line-sign" aria-hidden="true">
            {op.kind === "add" ? "+" : op.kind === "del" ? "-" : " "}
          </span>
          {op.kind !== "same" && <span class="sr-only">{op.kind === "add" ? "added: " : "removed: "}</span>}
          {op.text}
          {"\n"}
        </span>
      ))}
    </pre>
  );
}

function Value({ v, kind }: { v: unknown; kind: "old" | "new" | "same" }) {
  const text = showValue(v);
  const Tag = kind === "old" ? "del" : kind === "new" ? "ins" : "span";
  return <Tag class={`value value-${kind}`}>{text === "" ? '""' : text}</Tag>;
}

function Row({ c }: { c: FieldChange }) {
  return (
    <tr class={`diff-row diff-${c.kind}`} data-kind={c.kind}>
      <th scope="row" class="diff-path">
        {c.path}
      </th>
      <td class="diff-kind">{KIND_LABEL[c.kind]}</td>
      <td class="diff-value">
        {c.kind === "added" && <Value v={c.after} kind="new" />}
        {c.kind === "removed" && <Value v={c.before} kind="old" />}
        {c.kind === "same" && <Value v={c.after} kind="same" />}
        {c.kind === "changed" &&
          (wantsLineDiff(c.before, c.after) ? (
            <LineDiff before={c.before} after={c.after} />
          ) : (
            <span class="change">
              <Value v={c.before} kind="old" />
              <span class="arrow" aria-hidden="true">
                →
              </span>
              <span class="sr-only">changed to</span>
              <Value v={c.after} kind="new" />
            </span>
          ))}
      </td>
    </tr>
  );
}

/** The diff of two snapshots, or a note when the entry has none. */
export function DiffView({ before, after }: { before: unknown; after: unknown }) {
  const changes = diffFields(before, after);
  if (changes.length === 0) return <p class="muted">No before/after snapshot was recorded for this entry.</p>;
  const counts = { added: 0, removed: 0, changed: 0, same: 0 };
  for (const c of changes) counts[c.kind]++;
  return (
    <div class="diff">
      <p class="diff-summary">
        <span class="chip chip-added">{counts.added} added</span>
        <span class="chip chip-removed">{counts.removed} removed</span>
        <span class="chip chip-changed">{counts.changed} changed</span>
        {counts.same > 0 && <span class="chip">{counts.same} unchanged</span>}
      </p>
      <div class="table-wrap">
        <table class="diff-table">
          <caption class="sr-only">Changes by field</caption>
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Change</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {changes.map((c) => (
              <Row key={c.path} c={c} />
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
