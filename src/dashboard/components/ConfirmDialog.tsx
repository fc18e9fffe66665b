/** "Are you sure?" before a destructive action; shows the server's error if the action fails. */
import type { ComponentChildren } from "preact";
import { useAction } from "../hooks";
import { Dialog } from "./Dialog";
import { ErrorText } from "./Field";

export interface ConfirmProps {
  open: boolean;
  title: string;
  confirmLabel: string;
  onConfirm(): Promise<unknown>;
  onClose(): void;
  children: ComponentChildren;
}

/** A confirm step: Cancel, or the (danger) confirm button, which closes the dialog once the action succeeded. */
export function ConfirmDialog({ open, title, confirmLabel, onConfirm, onClose, children }: ConfirmProps) {
  const action = useAction(onConfirm);
  const close = () => {
    action.clear();
    onClose();
  };
  return (
    <Dialog open={open} title={title} onClose={close}>
      <div class="dialog-text">{children}</div>
      <ErrorText error={action.error} />
      <div class="actions">
        <button type="button" class="btn" onClick={close}>
          Cancel
        </button>
        <button
          type="button"
          class="btn danger"
          disabled={action.busy}
          onClick={async () => {
            if (await action.run()) close();
          }}
        >
          {confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}
