/** Users (super-admin only): create, change role, reset password, delete, app grants. */

import { api } from "../../api";
import { ErrorText } from "../../components/Field";
import { useResource } from "../../hooks";
import { useSession } from "../../session";
import { CreateUser } from "./CreateUser";
import { UserCard } from "./UserCard";

/** The users page. */
export function UsersPage() {
  const { me } = useSession();
  const users = useResource(() => api.users.list());
  return (
    <>
      <div class="page-head">
        <h1>Users</h1>
        <p class="muted">Who may sign in, with which role, and which apps they reach.</p>
      </div>
      <CreateUser onCreated={users.reload} />
      <ErrorText error={users.error} />
      {!users.data && users.loading && <p class="muted">Loading…</p>}
      <ul class="user-list" aria-label="Users" aria-busy={users.loading}>
        {users.data?.map((u) => (
          <UserCard key={u.id} user={u} self={u.id === me.id} onChange={users.reload} />
        ))}
      </ul>
    </>
  );
}
