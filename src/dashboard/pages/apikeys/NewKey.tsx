/** The one moment a key is visible: shown with a copy button and a plain warning. */
import { CopyButton } from "../../components/CopyButton";
import type { CreatedApiKey } from "../../types";

/** The freshly created key; `onDone` hides it for good. */
export function NewKey({ created, onDone }: { created: CreatedApiKey; onDone(): void }) {
  return (
    <section class="card new-key" aria-labelledby="new-key-title">
      <h2 id="new-key-title">API key "{created.name}" created</h2>
      <p class="warning" role="alert">
        Copy this key now. You will not see it again: Sundeck stores only a hash of it.
      </p>
      <div class="key-row">
        <label class="sr-only" for="new-key-value">
          New API key
        </label>
        <input
          id="new-key-value"
          class="mono"
          readOnly
          value={created.key}
          onFocus={(e) => e.currentTarget.select()}
          spellcheck={false}
        />
        <CopyButton text={created.key} label="Copy key" />
      </div>
      <p class="hint">
        Use it as <code>Authorization: Bearer {created.key.slice(0, 8)}…</code> or with <code>sundeck context add</code>.
      </p>
      <div class="actions">
        <button type="button" class="btn primary" onClick={onDone}>
          Done, I have copied it
        </button>
      </div>
    </section>
  );
}
