/** The form that creates an API key with an optional expiry. */
import { useState } from "preact/hooks";
import { api } from "../../api";
import { ErrorText, SelectField, TextField } from "../../components/Field";
import { useAction } from "../../hooks";
import type { CreatedApiKey } from "../../types";
import { EXPIRY_OPTIONS, expiresAt } from "./expiry";

/** Create a key; `onCreated` receives the key (shown once). */
export function CreateKey({ onCreated }: { onCreated(k: CreatedApiKey): void }) {
  const [name, setName] = useState("");
  const [expiry, setExpiry] = useState("never");
  const [date, setDate] = useState("");
  const action = useAction(async () => onCreated(await api.apiKeys.create(name.trim(), expiresAt(expiry, date))));
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await action.run()) {
      setName("");
      setExpiry("never");
      setDate("");
    }
  };
  return (
    <section class="card" aria-labelledby="new-key-form-title">
      <h2 id="new-key-form-title">Create an API key</h2>
      <form class="inline-form" onSubmit={submit} aria-label="Create API key">
        <TextField label="Name" required maxLength={100} placeholder="ci-deploy" value={name} onValue={setName} />
        <SelectField label="Expires" value={expiry} onValue={setExpiry} options={EXPIRY_OPTIONS} />
        {expiry === "date" && <TextField label="Expiry date" type="date" required value={date} onValue={setDate} />}
        <button type="submit" class="btn primary" disabled={action.busy}>
          Create key
        </button>
      </form>
      <ErrorText error={action.error} />
      <p class="hint">A key acts as you, with your role and app access. It cannot create further keys.</p>
    </section>
  );
}
