/** The login form; the server's message (invalid credentials, throttled) is shown as it is. */
import { useState } from "preact/hooks";
import { api } from "../api";
import { ErrorText, TextField } from "../components/Field";
import { useAction } from "../hooks";
import { AuthLayout } from "./AuthLayout";

/** Login; `onDone` runs once the session cookie is set. */
export function Login({ onDone, notice }: { onDone(): void; notice?: string | null }) {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const action = useAction(() => api.login(username.trim(), password));
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await action.run()) onDone();
    else setPassword("");
  };
  return (
    <AuthLayout title="Log in" intro={notice}>
      <form onSubmit={submit} aria-label="Log in">
        <TextField label="Username" autoComplete="username" required autoFocus value={username} onValue={setUsername} />
        <TextField
          label="Password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onValue={setPassword}
        />
        <ErrorText error={action.error} />
        <button type="submit" class="btn primary wide" disabled={action.busy}>
          Log in
        </button>
      </form>
    </AuthLayout>
  );
}
