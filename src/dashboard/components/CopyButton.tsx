/** Copies a text to the clipboard; falls back to a selection copy where the Clipboard API is missing (plain HTTP). */
import { useEffect, useState } from "preact/hooks";
import { Icon } from "./icons";

async function copy(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // fall through to the old way
  }
  const ta = document.createElement("textarea");
  ta.value = text;
  ta.setAttribute("readonly", "");
  ta.style.position = "fixed";
  ta.style.opacity = "0";
  document.body.appendChild(ta);
  ta.select();
  const ok = document.execCommand("copy");
  ta.remove();
  return ok;
}

/** A "Copy" button for `text`; says "Copied" for a moment after it worked. */
export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  useEffect(() => {
    if (state === "idle") return;
    const t = setTimeout(() => setState("idle"), 2000);
    return () => clearTimeout(t);
  }, [state]);
  return (
    <button type="button" class="btn" onClick={async () => setState((await copy(text)) ? "copied" : "failed")}>
      <Icon name={state === "copied" ? "check" : "copy"} />
      <span aria-live="polite">
        {state === "copied" ? "Copied" : state === "failed" ? "Copy failed: select and copy" : label}
      </span>
    </button>
  );
}
