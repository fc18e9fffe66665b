/** The live region where confirmations appear. */
import { dismiss, useToasts } from "../toast";
import { Icon } from "./icons";

/** Rendered once by the app. */
export function Toasts() {
  const list = useToasts();
  return (
    <div class="toasts" role="status" aria-live="polite">
      {list.map((t) => (
        <div key={t.id} class={`toast toast-${t.kind}`}>
          <span>{t.text}</span>
          <button type="button" class="icon-btn" aria-label="Dismiss" onClick={() => dismiss(t.id)}>
            <Icon name="x" />
          </button>
        </div>
      ))}
    </div>
  );
}
