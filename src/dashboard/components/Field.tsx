/** A labelled form control with an optional hint; the label is a real <label>, so tests and screen readers find it. */
import type { ComponentChildren } from "preact";
import { useId } from "preact/hooks";

/** The input attributes the dashboard uses; the rest go straight to the <input>. */
interface InputProps {
  label: string;
  value: string;
  onValue(v: string): void;
  hint?: ComponentChildren;
  class?: string;
  type?: "text" | "password" | "number" | "date" | "search";
  required?: boolean;
  autoComplete?: string;
  autoFocus?: boolean;
  placeholder?: string;
  minLength?: number;
  maxLength?: number;
  min?: number;
  step?: number;
  inputMode?: "numeric" | "text";
}

/** A text-like input (text, password, number, date...). */
export function TextField({ label, value, onValue, hint, class: cls, ...rest }: InputProps) {
  const id = useId();
  const hintId = `${id}-hint`;
  return (
    <div class={`field ${cls ?? ""}`}>
      <label for={id}>{label}</label>
      <input
        id={id}
        value={value}
        onInput={(e) => onValue(e.currentTarget.value)}
        aria-describedby={hint ? hintId : undefined}
        {...(rest as any)}
      />
      {hint && (
        <p class="hint" id={hintId}>
          {hint}
        </p>
      )}
    </div>
  );
}

interface TextAreaProps {
  label: string;
  value: string;
  onValue(v: string): void;
  hint?: ComponentChildren;
  class?: string;
  rows?: number;
  required?: boolean;
  placeholder?: string;
  disabled?: boolean;
}

/** A multi-line text field (monospace when `class` includes "mono"); no spell check, no autocomplete. */
export function TextAreaField({ label, value, onValue, hint, class: cls, ...rest }: TextAreaProps) {
  const id = useId();
  const hintId = `${id}-hint`;
  return (
    <div class={`field ${cls ?? ""}`}>
      <label for={id}>{label}</label>
      <textarea
        id={id}
        value={value}
        onInput={(e) => onValue(e.currentTarget.value)}
        aria-describedby={hint ? hintId : undefined}
        spellcheck={false}
        autoComplete="off"
        autoCapitalize="off"
        {...rest}
      />
      {hint && (
        <p class="hint" id={hintId}>
          {hint}
        </p>
      )}
    </div>
  );
}

interface SelectProps {
  label: string;
  value: string;
  onValue(v: string): void;
  options: ReadonlyArray<{ value: string; label: string }>;
  class?: string;
  disabled?: boolean;
}

/** A labelled <select>. */
export function SelectField({ label, value, onValue, options, class: cls, ...rest }: SelectProps) {
  const id = useId();
  return (
    <div class={`field ${cls ?? ""}`}>
      <label for={id}>{label}</label>
      <select id={id} value={value} disabled={rest.disabled} onChange={(e) => onValue(e.currentTarget.value)}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

/** The server's error line, announced when it appears. */
export function ErrorText({ error }: { error: string | null | undefined }) {
  if (!error) return null;
  return (
    <p class="error-text" role="alert">
      {error}
    </p>
  );
}
