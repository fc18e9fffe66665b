/** A user's app grants: chips that revoke, and a small form that grants by app slug. */
import { useState } from "preact/hooks";
import { isSlug } from "../../../shared/slug";
import { api } from "../../api";
import { ErrorText } from "../../components/Field";
import { Icon } from "../../components/icons";
import { useAction } from "../../hooks";
import { toast } from "../../toast";
import type { User } from "../../types";

/** Grants of `user`; `onChange` reloads the list. */
export function AppAccess({ user, onChange }: { user: User; onChange(): void }) {
  const [slug, setSlug] = useState("");
  const [invalid, setInvalid] = useState<string | null>(null);
  const grant = useAction((s: string) => api.users.grant(user.id, s));
  const revoke = useAction((s: string) => api.users.revoke(user.id, s));
  const inputId = `grant-${user.id}`;

  const submit = async (e: Event) => {
    e.preventDefault();
    const s = slug.trim();
    if (!isSlug(s)) {
      setInvalid("An app slug is lowercase letters and digits separated by single dashes, e.g. my-app");
      return;
    }
    setInvalid(null);
    if (await grant.run(s)) {
      toast(`${user.username} can now reach ${s}`);
      setSlug("");
      onChange();
    }
  };

  if (user.role === "super_admin" || user.role === "admin") {
    return <p class="muted small">Reaches every app.</p>;
  }
  return (
    <div class="access">
      <ul class="chips" aria-label={`Apps ${user.username} can reach`}>
        {user.app_access.length === 0 && <li class="muted small">No apps granted.</li>}
        {user.app_access.map((s) => (
          <li key={s} class="chip">
            <span>{s}</span>
            <button
              type="button"
              class="icon-btn small"
              aria-label={`Revoke ${user.username}'s access to ${s}`}
              disabled={revoke.busy}
              onClick={async () => {
                if (await revoke.run(s)) {
                  toast(`Revoked ${user.username}'s access to ${s}`);
                  onChange();
                }
              }}
            >
              <Icon name="x" />
            </button>
          </li>
        ))}
      </ul>
      <form class="grant-form" onSubmit={submit} aria-label={`Grant app access to ${user.username}`}>
        <label class="sr-only" for={inputId}>
          Grant app to {user.username}
        </label>
        <input
          id={inputId}
          placeholder="app-slug"
          autoComplete="off"
          value={slug}
          onInput={(e) => setSlug(e.currentTarget.value)}
        />
        <button type="submit" class="btn" disabled={grant.busy}>
          Grant
        </button>
      </form>
      <ErrorText error={invalid ?? grant.error ?? revoke.error} />
    </div>
  );
}
