/**
 * The template wizard's parts: the step list, one variable's field (secrets masked with a reveal toggle), and the
 * quick test's explanation of public_host with the form that saves it.
 */
import { useId, useState } from "preact/hooks";
import { quickTestHost } from "../../../shared/quickhost";
import { api } from "../../api";
import { ErrorText, TextField } from "../../components/Field";
import { Icon } from "../../components/icons";
import type { RoutingChoice, TemplateVariable } from "../../templates";

export const STEPS = ["Settings", "Routing", "Review", "Deploy"] as const;
export type Step = (typeof STEPS)[number];

export const ROUTING_CHOICES: ReadonlyArray<{ mode: RoutingChoice["mode"]; label: string; detail: string }> = [
  { mode: "quick", label: "Quick test", detail: "a name under sslip.io, nothing to set up" },
  { mode: "domain", label: "Custom domain", detail: "a name of yours whose DNS points here" },
  { mode: "none", label: "None", detail: "not routed (set a domain later in the Endpoints tab)" },
];

export const TLS_OPTIONS = [
  { value: "", label: "Default" },
  { value: "auto", label: "auto (Let's Encrypt)" },
  { value: "local", label: "local (this server's CA)" },
  { value: "custom", label: "custom (upload a certificate)" },
  { value: "off", label: "off (plain HTTP)" },
];

export function Steps({ step }: { step: Step }) {
  return (
    <ol class="wizard-steps" aria-label="Steps">
      {STEPS.map((s, i) => (
        <li key={s} aria-current={s === step ? "step" : undefined} class={STEPS.indexOf(step) > i ? "done" : undefined}>
          <span class="step-n">{i + 1}</span> {s}
        </li>
      ))}
    </ol>
  );
}

/** One variable's field; a secret is masked with a reveal toggle and says it is generated when left empty. */
export function VariableField(props: { v: TemplateVariable; value: string; problem?: string; onValue(v: string): void }) {
  const { v, value, problem, onValue } = props;
  const [shown, setShown] = useState(false);
  const id = useId();
  const hint = [
    v.help,
    v.type === "secret"
      ? `Left empty, a random ${v.generate?.length ?? 32}-character value is generated on the server; you see it on the review step.`
      : null,
  ]
    .filter(Boolean)
    .join(" ");
  if (v.type !== "secret")
    return (
      <div>
        <TextField
          label={`${v.label}${v.required ? "" : " (optional)"}`}
          value={value}
          onValue={onValue}
          hint={hint || undefined}
          inputMode={v.type === "number" ? "numeric" : undefined}
          placeholder={v.type === "domain" ? "app.example.com" : v.type === "email" ? "you@example.com" : undefined}
          autoComplete="off"
        />
        {problem && <p class="error-inline small">{problem}</p>}
      </div>
    );
  return (
    <div class="field secret-field">
      <label for={id}>{v.label}</label>
      <div class="secret-input">
        <input
          id={id}
          class="mono"
          type={(shown ? "text" : "password") as "text"}
          value={value}
          placeholder="generated"
          autoComplete="new-password"
          spellcheck={false}
          aria-describedby={`${id}-hint`}
          onInput={(e) => onValue(e.currentTarget.value)}
        />
        <button
          type="button"
          class="icon-btn"
          aria-label={`Show ${v.label}`}
          aria-pressed={shown}
          title={shown ? "Hide" : "Show"}
          onClick={() => setShown(!shown)}
        >
          <Icon name={shown ? "eyeOff" : "eye"} />
        </button>
      </div>
      <p class="hint" id={`${id}-hint`}>
        {hint}
      </p>
    </div>
  );
}

/** Step 2's quick-test explanation, and the public host form for those who may set it. */
export function PublicHostNote(props: { publicHost: string; slug: string; canSet: boolean; onSaved(h: string): void }) {
  const { publicHost, slug, canSet, onSaved } = props;
  const [value, setValue] = useState(publicHost);
  const [error, setError] = useState<string | null>(null);
  const host = quickTestHost(slug || "app", publicHost);
  if (host)
    return (
      <p class="hint">
        The app answers at <code>{host}</code>: sslip.io resolves that name to <code>{publicHost}</code>, this server's public
        address (public_host). TLS defaults to <code>local</code> (this server's CA) because the shared sslip.io Let's Encrypt
        limit is often used up.
      </p>
    );
  const save = async () => {
    setError(null);
    try {
      onSaved((await api.settings.setPublicHost(value.trim())).public_host);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <div class="notice warn" role="note">
      <p>
        A quick test gives the app a name under sslip.io that resolves to this server, such as{" "}
        <code>{slug || "app"}.203.0.113.7.sslip.io</code>. It needs this server's public IP address as <em>public host</em>
        {publicHost ? (
          <>
            , which is <code>{publicHost}</code> now (not an IP address)
          </>
        ) : (
          ", which is not set yet"
        )}
        .
      </p>
      {canSet ? (
        <div class="inline-form">
          <TextField label="Public IP address" value={value} onValue={setValue} placeholder="203.0.113.7" autoComplete="off" />
          <button type="button" class="btn" onClick={() => void save()}>
            Save public host
          </button>
        </div>
      ) : (
        <p class="small">A super admin sets it in Settings.</p>
      )}
      <ErrorText error={error} />
    </div>
  );
}
