/** The signed-in user's menu: who you are, change password, log out. */
import { useEffect, useRef, useState } from "preact/hooks";
import { useSession } from "../session";
import { ROLE_LABELS } from "../types";
import { Icon } from "./icons";
import { PasswordDialog } from "./PasswordDialog";

/** A disclosure button with the username; the menu closes on Escape and outside clicks. */
export function UserMenu() {
  const { me, logout } = useSession();
  const [open, setOpen] = useState(false);
  const [changing, setChanging] = useState(false);
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    if (!open) return;
    const onDoc = (e: MouseEvent) => {
      if (!root.current?.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        setOpen(false);
        button.current?.focus();
      }
    };
    document.addEventListener("mousedown", onDoc);
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("mousedown", onDoc);
      document.removeEventListener("keydown", onKey);
    };
  }, [open]);

  return (
    <div class="user-menu" ref={root}>
      <button
        ref={button}
        type="button"
        class="btn ghost"
        aria-expanded={open}
        aria-controls="user-menu-panel"
        aria-label={`Account menu for ${me.username}`}
        onClick={() => setOpen(!open)}
      >
        <Icon name="user" />
        <span class="user-name">{me.username}</span>
        <Icon name="chevron" />
      </button>
      {open && (
        <div class="menu" id="user-menu-panel">
          <p class="menu-who">
            Signed in as <strong>{me.username}</strong>
            <span class="muted">{ROLE_LABELS[me.role] ?? me.role}</span>
          </p>
          <button
            type="button"
            class="menu-item"
            onClick={() => {
              setOpen(false);
              setChanging(true);
            }}
          >
            Change password
          </button>
          <button type="button" class="menu-item" onClick={() => void logout()}>
            Log out
          </button>
        </div>
      )}
      <PasswordDialog open={changing} onClose={() => setChanging(false)} />
    </div>
  );
}
