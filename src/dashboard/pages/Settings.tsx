/** Server settings (super-admin): TLS mode (read only, from the config), audit retention, public host, purging the activity log. */
import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { ErrorText, TextField } from "../components/Field";
import { TrustNote } from "../components/TrustLink";
import { useAction, useResource } from "../hooks";
import { useSystemInfo } from "../sysinfo";
import { toast } from "../toast";
import { modeText } from "./apps/endpoints";

function Tls() {
  const info = useSystemInfo();
  const d = info.data;
  return (
    <section class="card" aria-labelledby="tls-title">
      <h2 id="tls-title">TLS</h2>
      <ErrorText error={info.error} />
      {d && (
        <>
          <dl class="facts">
            <dt>TLS mode</dt>
            <dd>
              <strong>{d.tls_mode}</strong> <span class="muted">· {modeText(d.tls_mode)}</span>
            </dd>
            <dt>Dashboard domain</dt>
            <dd>{d.domain ?? <span class="muted">none</span>}</dd>
          </dl>
          <p class="hint">
            Set in the configuration (<code>tls.mode</code>); an endpoint's <code>sundeck.tls</code> label overrides it.
          </p>
          {d.tls_mode === "local" && <TrustNote />}
        </>
      )}
    </section>
  );
}

function Retention() {
  const cfg = useResource(() => api.settings.auditConfig());
  const [days, setDays] = useState("");
  useEffect(() => {
    if (cfg.data) setDays(String(cfg.data.retention_days));
  }, [cfg.data]);
  const save = useAction(async () => {
    const n = Number(days);
    if (!/^\d+$/.test(days.trim()) || !Number.isSafeInteger(n))
      throw new Error("Retention must be a whole number of days (0 keeps forever)");
    cfg.set(await api.settings.setAuditConfig(n));
  });
  return (
    <section class="card" aria-labelledby="retention-title">
      <h2 id="retention-title">Audit retention</h2>
      <form
        class="inline-form"
        aria-label="Audit retention"
        onSubmit={async (e) => {
          e.preventDefault();
          if (await save.run()) toast("Audit retention saved");
        }}
      >
        <TextField
          label="Retention (days)"
          type="number"
          min={0}
          step={1}
          inputMode="numeric"
          required
          value={days}
          onValue={setDays}
          hint="Entries older than this are removed nightly. 0 keeps them forever."
        />
        <button type="submit" class="btn primary" disabled={save.busy || !cfg.data}>
          Save retention
        </button>
      </form>
      <ErrorText error={cfg.error ?? save.error} />
    </section>
  );
}

function PublicHost() {
  const cfg = useResource(() => api.settings.publicHost());
  const [host, setHost] = useState("");
  useEffect(() => {
    if (cfg.data) setHost(cfg.data.public_host);
  }, [cfg.data]);
  const save = useAction(async () => cfg.set(await api.settings.setPublicHost(host.trim())));
  return (
    <section class="card" aria-labelledby="public-host-title">
      <h2 id="public-host-title">Public host</h2>
      <form
        class="inline-form"
        aria-label="Public host"
        onSubmit={async (e) => {
          e.preventDefault();
          if (await save.run()) toast("Public host saved");
        }}
      >
        <TextField
          label="Public host"
          placeholder="203.0.113.10 or deploy.example.com"
          autoComplete="off"
          value={host}
          onValue={setHost}
          hint="Host name or IP used to build quick-test domains of template deploys. Leave empty for none."
        />
        <button type="submit" class="btn primary" disabled={save.busy || !cfg.data}>
          Save public host
        </button>
      </form>
      <ErrorText error={cfg.error ?? save.error} />
    </section>
  );
}

function Purge() {
  const [confirming, setConfirming] = useState(false);
  return (
    <section class="card danger-zone" aria-labelledby="purge-title">
      <h2 id="purge-title">Purge the activity log</h2>
      <p>Deletes every activity entry. One new entry records that you purged it and how many entries were removed.</p>
      <button type="button" class="btn danger-outline" onClick={() => setConfirming(true)}>
        Purge activity…
      </button>
      <ConfirmDialog
        open={confirming}
        title="Purge the whole activity log?"
        confirmLabel="Purge all entries"
        onClose={() => setConfirming(false)}
        onConfirm={async () => {
          await api.activity.purge();
          toast("Activity log purged");
        }}
      >
        <p>This removes the audit trail of every app and user. It cannot be undone.</p>
      </ConfirmDialog>
    </section>
  );
}

/** The settings page. */
export function Settings() {
  return (
    <>
      <div class="page-head">
        <h1>Settings</h1>
        <p class="muted">Server-wide settings. Changes are recorded in the activity log.</p>
      </div>
      <Tls />
      <Retention />
      <PublicHost />
      <Purge />
    </>
  );
}
