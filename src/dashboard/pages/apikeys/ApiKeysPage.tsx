/** The caller's API keys: create (shown once), list, revoke. */
import { useState } from "preact/hooks";
import { api } from "../../api";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { ErrorText } from "../../components/Field";
import { formatTime, relativeTime } from "../../format";
import { useResource } from "../../hooks";
import { toast } from "../../toast";
import type { ApiKey, CreatedApiKey } from "../../types";
import { CreateKey } from "./CreateKey";
import { NewKey } from "./NewKey";

const expired = (k: ApiKey) => k.expires_at !== null && new Date(k.expires_at).getTime() <= Date.now();

function KeyRow({ k, onRevoke }: { k: ApiKey; onRevoke(k: ApiKey): void }) {
  return (
    <tr aria-label={k.name}>
      <th scope="row">{k.name}</th>
      <td data-label="Prefix">
        <code>{k.prefix}…</code>
      </td>
      <td data-label="Created" title={formatTime(k.created_at)}>
        {relativeTime(k.created_at)}
      </td>
      <td data-label="Expires" title={formatTime(k.expires_at)}>
        {k.expires_at ? expired(k) ? <span class="badge bad">expired</span> : relativeTime(k.expires_at) : "never"}
      </td>
      <td data-label="Last used" title={formatTime(k.last_used_at)}>
        {k.last_used_at ? relativeTime(k.last_used_at) : <span class="muted">never</span>}
      </td>
      <td class="cell-actions">
        <button type="button" class="btn small danger-outline" onClick={() => onRevoke(k)}>
          Revoke<span class="sr-only"> {k.name}</span>
        </button>
      </td>
    </tr>
  );
}

/** The API keys page. */
export function ApiKeysPage() {
  const keys = useResource(() => api.apiKeys.list());
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  return (
    <>
      <div class="page-head">
        <h1>API keys</h1>
        <p class="muted">Keys for the command-line client and CI jobs.</p>
      </div>
      {created ? (
        <NewKey created={created} onDone={() => setCreated(null)} />
      ) : (
        <CreateKey
          onCreated={(k) => {
            setCreated(k);
            void keys.reload();
          }}
        />
      )}
      <section class="card" aria-labelledby="keys-title">
        <h2 id="keys-title">Your keys</h2>
        <ErrorText error={keys.error} />
        {keys.data?.length === 0 && <p class="muted">You have no API keys.</p>}
        {!!keys.data?.length && (
          <div class="table-wrap">
            <table class="table stack">
              <caption class="sr-only">Your API keys</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Prefix</th>
                  <th scope="col">Created</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Last used</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.data.map((k) => (
                  <KeyRow key={k.id} k={k} onRevoke={setRevoking} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <ConfirmDialog
        open={revoking !== null}
        title={`Revoke "${revoking?.name ?? ""}"?`}
        confirmLabel="Revoke key"
        onClose={() => setRevoking(null)}
        onConfirm={async () => {
          if (!revoking) return;
          await api.apiKeys.revoke(revoking.id);
          toast(`API key "${revoking.name}" revoked`);
          await keys.reload();
        }}
      >
        <p>Anything still using this key gets 401 from now on. This cannot be undone.</p>
      </ConfirmDialog>
    </>
  );
}
