/** Change one's own password. The server ends other sessions and hands this browser a fresh one. */
import { useState } from "preact/hooks";
import { api } from "../api";
import { useAction } from "../hooks";
import { toast } from "../toast";
import { Dialog } from "./Dialog";
import { ErrorText, TextField } from "./Field";

/** The dialog; closes itself after a successful change. */
export function PasswordDialog({ open, onClose }: { open: boolean; onClose(): void }) {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [confirm, setConfirm] = useState("");
  const [mismatch, setMismatch] = useState<string | null>(null);
  const action = useAction(() => api.changePassword(current, next));
  const close = () => {
    setCurrent("");
    setNext("");
    setConfirm("");
    setMismatch(null);
    action.clear();
    onClose();
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    if (next !== confirm) return setMismatch("The new passwords do not match");
    setMismatch(null);
    if (await action.run()) {
      toast("Password changed");
      close();
    }
  };
  return (
    <Dialog open={open} title="Change password" onClose={close}>
      <form onSubmit={submit} aria-label="Change password">
        <TextField
          label="Current password"
          type="password"
          autoComplete="current-password"
          required
          value={current}
          onValue={setCurrent}
        />
        <TextField
          label="New password"
          type="password"
          autoComplete="new-password"
          required
          value={next}
          onValue={setNext}
          hint="At least 8 characters. Your other sessions will be signed out."
        />
        <TextField
          label="Confirm new password"
          type="password"
          autoComplete="new-password"
          required
          value={confirm}
          onValue={setConfirm}
        />
        <ErrorText error={mismatch ?? action.error} />
        <div class="actions">
          <button type="button" class="btn" onClick={close}>
            Cancel
          </button>
          <button type="submit" class="btn primary" disabled={action.busy}>
            Change password
          </button>
        </div>
      </form>
    </Dialog>
  );
}
