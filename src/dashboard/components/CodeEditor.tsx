/**
 * A plain <textarea> that feels like a small code editor: monospace, a line-number gutter that scrolls with the
 * text, Tab and Shift+Tab indent and outdent with spaces. Escape releases Tab so keyboard users can leave.
 */
import { useId, useRef } from "preact/hooks";

const INDENT = "  ";

export interface CodeEditorProps {
  label: string;
  value: string;
  onValue(v: string): void;
  hint?: string;
  readOnly?: boolean;
  /** 1-based lines to mark in the gutter (problems). */
  marked?: number[];
  placeholder?: string;
  rows?: number;
}

/** Replace the selection with `text` (kept in the browser's undo history where supported). */
function insert(ta: HTMLTextAreaElement, text: string, start: number, end: number, select: "end" | "preserve" = "end") {
  ta.setSelectionRange(start, end);
  if (!document.execCommand?.("insertText", false, text)) {
    ta.setRangeText(text, start, end, select === "end" ? "end" : "preserve");
    ta.dispatchEvent(new Event("input", { bubbles: true }));
  }
}

/** Indent (or with `out`, outdent) the lines the selection touches; a bare caret gets spaces inserted. */
function indent(ta: HTMLTextAreaElement, out: boolean) {
  const { value, selectionStart: s, selectionEnd: e } = ta;
  if (!out && s === e) {
    insert(ta, INDENT, s, e);
    return;
  }
  const from = value.lastIndexOf("\n", s - 1) + 1;
  const toNl = value.indexOf("\n", e > s && value[e - 1] === "\n" ? e - 1 : e);
  const to = toNl === -1 ? value.length : toNl;
  const block = value.slice(from, to);
  const lines = block.split("\n");
  const changed = lines.map((l) => (out ? l.replace(/^ {1,2}/, "") : INDENT + l)).join("\n");
  if (changed === block) return;
  insert(ta, changed, from, to);
  ta.setSelectionRange(from, from + changed.length);
}

/** The editor. */
export function CodeEditor({ label, value, onValue, hint, readOnly, marked = [], placeholder, rows = 16 }: CodeEditorProps) {
  const id = useId();
  const gutter = useRef<HTMLDivElement>(null);
  const released = useRef(false);
  const count = Math.max(1, value.split("\n").length);
  const marks = new Set(marked);
  const numbers: string[] = [];
  for (let i = 1; i <= count; i++) numbers.push(String(i));

  const onKeyDown = (e: KeyboardEvent) => {
    const ta = e.currentTarget as HTMLTextAreaElement;
    if (e.key === "Escape") {
      released.current = true;
      return;
    }
    if (e.key === "Tab" && !released.current && !readOnly && !e.ctrlKey && !e.altKey && !e.metaKey) {
      e.preventDefault();
      indent(ta, e.shiftKey);
      return;
    }
    if (e.key !== "Shift") released.current = false;
  };

  return (
    <div class="field code-field">
      <label for={id}>{label}</label>
      <div class={`code-editor${readOnly ? " readonly" : ""}`}>
        <div class="code-gutter" ref={gutter} aria-hidden="true">
          {numbers.map((n, i) => (
            <div key={n} class={marks.has(i + 1) ? "marked" : undefined}>
              {n}
            </div>
          ))}
        </div>
        <textarea
          id={id}
          class="code-input"
          value={value}
          rows={rows}
          wrap="off"
          spellcheck={false}
          autoComplete="off"
          autoCapitalize="off"
          readOnly={readOnly}
          placeholder={placeholder}
          aria-describedby={hint ? `${id}-hint` : undefined}
          onInput={(e) => onValue(e.currentTarget.value)}
          onKeyDown={onKeyDown}
          onScroll={(e) => {
            if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
          }}
        />
      </div>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
    </div>
  );
}
