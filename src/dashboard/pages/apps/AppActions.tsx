/** The lifecycle buttons of an app page: start, stop, restart, pull, cancel while busy, and remove with a confirmation. */
import { useState } from "preact/hooks";
import { api, type LifecycleAction } from "../../api";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { navigate } from "../../router";
import { toast } from "../../toast";
import type { AppView } from "../../types";
import type { DeployRun } from "./useDeployRun";

const LABELS: Record<LifecycleAction, string> = { start: "Start", stop: "Stop", restart: "Restart", pull: "Pull" };
const HINTS: Record<LifecycleAction, string> = {
  start: "Start the app's containers",
  stop: "Stop the containers; the app stays stopped until started",
  restart: "Restart the containers",
  pull: "Pull every image again and redeploy",
};

export interface AppActionsProps {
  app: AppView;
  run: DeployRun;
  /** An operation runs (here or elsewhere). */
  busy: boolean;
}

/** The action bar. */
export function AppActions({ app, run, busy }: AppActionsProps) {
  const [removing, setRemoving] = useState(false);
  const [volumes, setVolumes] = useState(false);
  const slug = app.slug;
  const enabled: Record<LifecycleAction, boolean> = {
    start: app.stopped || app.status === "stopped" || app.status === "failed",
    stop: !app.stopped,
    restart: !app.stopped,
    pull: true,
  };

  const act = (a: LifecycleAction) => run.start(slug, LABELS[a], () => api.apps.action(slug, a));
  const cancel = async () => {
    try {
      await api.apps.cancel(slug);
      toast("Cancel requested");
    } catch (e) {
      toast((e as Error).message, "error");
    }
  };
  const remove = async () => {
    let refused = null as Error | null;
    const ok = await run.start(
      slug,
      "Remove",
      () =>
        api.apps.remove(slug, volumes).catch((e: Error) => {
          refused = e;
          throw e;
        }),
      {
        onDone(r) {
          if (r.status !== "succeeded") return;
          toast(`App ${slug} removed${volumes ? " with its volumes" : ""}`);
          navigate("/apps");
        },
      },
    );
    if (!ok && refused) throw refused;
  };

  return (
    <fieldset class="app-actions">
      <legend class="sr-only">App actions</legend>
      {(Object.keys(LABELS) as LifecycleAction[]).map((a) => (
        <button key={a} type="button" class="btn" title={HINTS[a]} disabled={busy || !enabled[a]} onClick={() => void act(a)}>
          {LABELS[a]}
        </button>
      ))}
      {busy && (
        <button type="button" class="btn danger-outline" onClick={() => void cancel()}>
          Cancel
        </button>
      )}
      <button type="button" class="btn danger-outline" disabled={busy} onClick={() => setRemoving(true)}>
        Remove
      </button>
      <ConfirmDialog
        open={removing}
        title={`Remove ${slug}?`}
        confirmLabel="Remove app"
        onConfirm={remove}
        onClose={() => {
          setRemoving(false);
          setVolumes(false);
        }}
      >
        <p>
          This stops and removes the containers of <strong>{slug}</strong>, its directory and its kept versions. Its activity
          stays.
        </p>
        <label class="check">
          <input type="checkbox" checked={volumes} onChange={(e) => setVolumes(e.currentTarget.checked)} />
          Also remove volumes (the data in them is lost)
        </label>
      </ConfirmDialog>
    </fieldset>
  );
}
