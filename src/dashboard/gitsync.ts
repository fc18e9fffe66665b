/**
 * The Git Sync page's pure side and its API calls: who may read and change it, the settings form as text fields and
 * switches (secrets write-only: a stored one shows as "set", a blank field sends the mask and keeps it, "Remove"
 * sends "" and clears it), the checks the browser makes before sending, and the banner text.
 */
import { GIT_SECRET_MASK, type GitSyncConfig, type GitSyncConfigView, type GitSyncStatus } from "../shared/git-sync";
import { request } from "./api";

export type { GitSyncConfig, GitSyncConfigView, GitSyncConflict, GitSyncStatus } from "../shared/git-sync";
export { conflictText, GIT_SECRET_MASK, gitStateText, shortSha } from "../shared/git-sync";

/** The routes the page calls. */
export const gitApi = {
  status: () => request<GitSyncStatus>("GET", "/api/git/status"),
  config: () => request<GitSyncConfigView>("GET", "/api/git/config"),
  saveConfig: (c: GitSyncConfig) => request<GitSyncConfigView>("PUT", "/api/git/config", c),
  syncNow: () => request<unknown>("POST", "/api/git/sync-now"),
  applyPending: () => request<unknown>("POST", "/api/git/apply-pending"),
};

/** Who sees the page (status, conflicts, Sync now, Apply pending): the roles that change every app. */
export const mayReadGitSync = (me: { role: string }) => me.role === "super_admin" || me.role === "admin";
/** Who reads and changes the settings (CONTRACT: super-admin). */
export const mayConfigureGitSync = (me: { role: string }) => me.role === "super_admin";

/** The settings form: every field as the controls hold it; secrets as typed (blank = keep). */
export interface GitForm {
  enabled: boolean;
  remote: string;
  branch: string;
  author_name: string;
  author_email: string;
  auth: "https" | "ssh";
  ssh_key_path: string;
  https_username: string;
  https_token: string;
  clear_token: boolean;
  poll_interval: string;
  poll_enabled: boolean;
  webhook_secret: string;
  clear_webhook_secret: boolean;
  webhook_enabled: boolean;
  auto_push_enabled: boolean;
  auto_apply_enabled: boolean;
}

/** Whether the response says a secret is stored ("********"), as opposed to none (""). */
export const secretSet = (v: string | null | undefined) => !!v;

/** The form for a config response; the secret fields start blank (the server never sends them). */
export function formOf(c: GitSyncConfig): GitForm {
  return {
    enabled: c.enabled,
    remote: c.remote,
    branch: c.branch,
    author_name: c.author_name,
    author_email: c.author_email,
    auth: c.ssh_key_path || /^(ssh:\/\/|[\w.-]+@[\w.-]+:)/.test(c.remote) ? "ssh" : "https",
    ssh_key_path: c.ssh_key_path,
    https_username: c.https_username,
    https_token: "",
    clear_token: false,
    poll_interval: c.poll_interval,
    poll_enabled: c.poll_enabled,
    webhook_secret: "",
    clear_webhook_secret: false,
    webhook_enabled: c.webhook_enabled,
    auto_push_enabled: c.auto_push_enabled,
    auto_apply_enabled: c.auto_apply_enabled,
  };
}

/** What a secret field sends: the typed value, "" to clear, the mask to keep a stored one, "" when none is stored. */
export function secretBody(typed: string, clear: boolean, stored: boolean): string {
  if (typed !== "") return typed;
  if (clear) return "";
  return stored ? GIT_SECRET_MASK : "";
}

/** A duration as the server's config reads it (Go format and days: 60s, 1h30m, 1.5h, 7d). */
const DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h|d))+$/;

/**
 * The PUT body of the form, or the first problem the browser can tell for certain (the server checks the rest and
 * its line is shown as it says it). `stored` is the config the form was loaded from.
 */
export function configBody(f: GitForm, stored: GitSyncConfig): { body: GitSyncConfig } | { error: string } {
  const remote = f.remote.trim();
  if (f.enabled && !remote) return { error: "A remote is required to enable git sync" };
  if (!/^[A-Za-z0-9._/-]+$/.test(f.branch.trim())) return { error: "The branch must be a branch name, such as main" };
  const poll = f.poll_interval.trim();
  if (!DURATION.test(poll)) return { error: "The poll interval must be a duration such as 60s, 5m or 1h30m" };
  const ssh = f.auth === "ssh";
  const body: GitSyncConfig = {
    enabled: f.enabled,
    remote,
    branch: f.branch.trim(),
    author_name: f.author_name.trim(),
    author_email: f.author_email.trim(),
    // SSH and a token are mutually exclusive: the other method's fields are cleared
    ssh_key_path: ssh ? f.ssh_key_path.trim() : "",
    https_username: ssh ? "" : f.https_username.trim(),
    https_token: ssh ? "" : secretBody(f.https_token, f.clear_token, secretSet(stored.https_token)),
    poll_interval: poll,
    poll_enabled: f.poll_enabled,
    webhook_secret: secretBody(f.webhook_secret, f.clear_webhook_secret, secretSet(stored.webhook_secret)),
    webhook_enabled: f.webhook_enabled,
    auto_push_enabled: f.auto_push_enabled,
    auto_apply_enabled: f.auto_apply_enabled,
  };
  return { body };
}

/** The banner over the page when the remote is ahead and not applied; null otherwise. */
export function behindText(s: Pick<GitSyncStatus, "enabled" | "state" | "behind_by">): string | null {
  if (!s.enabled || s.behind_by <= 0) return null;
  return `The remote is ${s.behind_by} commit${s.behind_by === 1 ? "" : "s"} ahead. They are not applied until you apply them.`;
}

/** The webhook address a git host is given. */
export const webhookUrl = (origin: string) => `${origin.replace(/\/+$/, "")}/api/git/webhook`;
