/** First run: no user exists yet, so create the super-admin; the server signs them in. */
import { useState } from "preact/hooks";
import { ApiError, api } from "../api";
import { ErrorText, TextField } from "../components/Field";
import { useAction } from "../hooks";
import { AuthLayout } from "./AuthLayout";

/**
 * The first-run form; `onDone` runs once the account exists and the session cookie is set, `onTaken` when someone
 * else completed setup meanwhile (409).
 */
export function Setup({ onDone, onTaken }: { onDone(): void; onTaken(): void }) {
  const [username, setUsername] = useState("admin");
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [mismatch, setMismatch] = useState<string | null>(null);
  const action = useAction(async () => {
    try {
      await api.setup(username.trim(), password);
      onDone();
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) onTaken();
      else throw err;
    }
  });
  const submit = async (e: Event) => {
    e.preventDefault();
    if (password !== confirm) return setMismatch("The passwords do not match");
    setMismatch(null);
    await action.run();
  };
  return (
    <AuthLayout
      title="Create the administrator account"
      intro="Welcome to Sundeck. This first account is the super-admin: it manages users, settings and every app."
    >
      <form onSubmit={submit} aria-label="First-run setup">
        <TextField label="Username" autoComplete="username" required value={username} onValue={setUsername} />
        <TextField
          label="Password"
          type="password"
          autoComplete="new-password"
          required
          value={password}
          onValue={setPassword}
          hint="At least 8 characters."
        />
        <TextField
          label="Confirm password"
          type="password"
          autoComplete="new-password"
          required
          value={confirm}
          onValue={setConfirm}
        />
        <ErrorText error={mismatch ?? action.error} />
        <button type="submit" class="btn primary wide" disabled={action.busy}>
          Create administrator
        </button>
      </form>
    </AuthLayout>
  );
}
