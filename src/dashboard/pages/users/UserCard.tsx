/** One user: role (changed in place), app grants, reset password and delete. */
import { useState } from "preact/hooks";
import { api } from "../../api";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { Dialog } from "../../components/Dialog";
import { ErrorText, TextField } from "../../components/Field";
import { formatTime } from "../../format";
import { useAction } from "../../hooks";
import { toast } from "../../toast";
import { ROLE_LABELS, type Role, type User } from "../../types";
import { AppAccess } from "./AppAccess";
import { ROLE_OPTIONS } from "./CreateUser";

function ResetPassword({ user, open, onClose }: { user: User; open: boolean; onClose(): void }) {
  const [password, setPassword] = useState("");
  const action = useAction(() => api.users.update(user.id, { password }));
  const close = () => {
    setPassword("");
    action.clear();
    onClose();
  };
  return (
    <Dialog open={open} title={`Reset password of ${user.username}`} onClose={close}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (await action.run()) {
            toast(`Password of ${user.username} reset`);
            close();
          }
        }}
      >
        <TextField
          label={`New password for ${user.username}`}
          type="password"
          autoComplete="new-password"
          required
          value={password}
          onValue={setPassword}
          hint="Their current sessions end; API keys keep working."
        />
        <ErrorText error={action.error} />
        <div class="actions">
          <button type="button" class="btn" onClick={close}>
            Cancel
          </button>
          <button type="submit" class="btn primary" disabled={action.busy}>
            Reset password
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** The card of `user`; `self` is the signed-in user (who cannot demote or delete themselves here). */
export function UserCard({ user, self, onChange }: { user: User; self: boolean; onChange(): void }) {
  const [resetting, setResetting] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const roleChange = useAction((role: Role) => api.users.update(user.id, { role }));
  const roleId = `role-${user.id}`;
  return (
    <li class="card user-card" aria-label={user.username}>
      <div class="user-head">
        <h3>
          {user.username}
          {self && <span class="badge">you</span>}
        </h3>
        <span class="muted small">created {formatTime(user.created_at)}</span>
      </div>
      <div class="user-body">
        <div class="field compact">
          <label for={roleId}>Role of {user.username}</label>
          <select
            id={roleId}
            value={user.role}
            disabled={self || roleChange.busy}
            title={self ? "You cannot change your own role" : undefined}
            onChange={async (e) => {
              const role = e.currentTarget.value as Role;
              if (await roleChange.run(role)) toast(`${user.username} is now ${ROLE_LABELS[role]}`);
              onChange();
            }}
          >
            {ROLE_OPTIONS.map((o) => (
              <option key={o.value} value={o.value}>
                {o.label}
              </option>
            ))}
          </select>
        </div>
        <div class="field compact">
          <span class="label">App access</span>
          <AppAccess user={user} onChange={onChange} />
        </div>
      </div>
      <ErrorText error={roleChange.error} />
      <div class="actions">
        <button type="button" class="btn" onClick={() => setResetting(true)}>
          Reset password<span class="sr-only"> of {user.username}</span>
        </button>
        {!self && (
          <button type="button" class="btn danger-outline" onClick={() => setDeleting(true)}>
            Delete<span class="sr-only"> {user.username}</span>
          </button>
        )}
      </div>
      <ResetPassword user={user} open={resetting} onClose={() => setResetting(false)} />
      <ConfirmDialog
        open={deleting}
        title={`Delete ${user.username}?`}
        confirmLabel="Delete user"
        onClose={() => setDeleting(false)}
        onConfirm={async () => {
          await api.users.remove(user.id);
          toast(`User ${user.username} deleted`);
          onChange();
        }}
      >
        <p>{user.username} can no longer sign in, and their API keys stop working. Their activity entries stay in the log.</p>
      </ConfirmDialog>
    </li>
  );
}
