/** The form that creates a user with a role and an initial password. */
import { useState } from "preact/hooks";
import { api } from "../../api";
import { ErrorText, SelectField, TextField } from "../../components/Field";
import { useAction } from "../../hooks";
import { toast } from "../../toast";
import { ROLE_LABELS, ROLES, type Role } from "../../types";

export const ROLE_OPTIONS = ROLES.map((r) => ({ value: r, label: ROLE_LABELS[r] }));

/** Create a user; `onCreated` reloads the list. */
export function CreateUser({ onCreated }: { onCreated(): void }) {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [role, setRole] = useState<Role>("viewer");
  const action = useAction(() => api.users.create(username.trim(), password, role));
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await action.run()) {
      toast(`User ${username.trim()} created`);
      setUsername("");
      setPassword("");
      onCreated();
    }
  };
  return (
    <section class="card" aria-labelledby="new-user-title">
      <h2 id="new-user-title">New user</h2>
      <form class="inline-form" onSubmit={submit} aria-label="Create user">
        <TextField label="Username" autoComplete="off" required value={username} onValue={setUsername} />
        <TextField
          label="Initial password"
          type="password"
          autoComplete="new-password"
          required
          value={password}
          onValue={setPassword}
        />
        <SelectField label="Role" value={role} onValue={(v) => setRole(v as Role)} options={ROLE_OPTIONS} />
        <button type="submit" class="btn primary" disabled={action.busy}>
          Create user
        </button>
      </form>
      <ErrorText error={action.error} />
      <p class="hint">
        Viewers read the apps granted to them; Manage users may also change them; Admins reach every app; the Super admin also
        manages users and settings.
      </p>
    </section>
  );
}
