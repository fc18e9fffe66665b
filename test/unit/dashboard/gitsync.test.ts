/**
 * The Git Sync page's pure side (dashboard/gitsync.ts): who sees it, the settings form to its PUT body (secrets
 * write-only: typed sets, blank keeps a stored one with the mask, Remove clears; SSH and a token never both), the
 * browser's checks, the behind-by-N banner and the words of the status.
 */
import { describe, expect, test } from "bun:test";
import {
  behindText,
  configBody,
  formOf,
  GIT_SECRET_MASK,
  type GitForm,
  type GitSyncConfig,
  mayConfigureGitSync,
  mayReadGitSync,
  secretBody,
  webhookUrl,
} from "../../../src/dashboard/gitsync";
import { conflictText, gitStateText } from "../../../src/shared/git-sync";
import { gitStatus } from "../../helpers/git-status";

const stored = (over: Partial<GitSyncConfig> = {}): GitSyncConfig => ({
  enabled: true,
  remote: "https://git.example.com/ops/apps.git",
  branch: "main",
  author_name: "sundeck",
  author_email: "sundeck@localhost",
  ssh_key_path: "",
  https_username: "bot",
  https_token: GIT_SECRET_MASK,
  poll_interval: "60s",
  webhook_secret: "",
  poll_enabled: true,
  auto_push_enabled: true,
  auto_apply_enabled: true,
  webhook_enabled: true,
  ...over,
});

const status = gitStatus;

const body = (c: GitSyncConfig, edit: Partial<GitForm> = {}) => {
  const r = configBody({ ...formOf(c), ...edit }, c);
  if ("error" in r) throw new Error(r.error);
  return r.body;
};

describe("roles", () => {
  test("super-admins and admins see the page; only the super-admin the settings", () => {
    expect(["super_admin", "admin", "manage", "viewer"].map((role) => mayReadGitSync({ role }))).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(["super_admin", "admin", "manage", "viewer"].map((role) => mayConfigureGitSync({ role }))).toEqual([
      true,
      false,
      false,
      false,
    ]);
  });
});

describe("secrets are write-only", () => {
  test("secretBody: typed sets, blank keeps a stored one with the mask, Remove clears, none stays none", () => {
    expect(secretBody("tok", false, true)).toBe("tok");
    expect(secretBody("", false, true)).toBe(GIT_SECRET_MASK);
    expect(secretBody("", true, true)).toBe("");
    expect(secretBody("", false, false)).toBe("");
    // a typed value wins over the Remove box
    expect(secretBody("new", true, true)).toBe("new");
  });

  test("the form starts with blank secrets, whatever the response carried", () => {
    const f = formOf(stored({ webhook_secret: GIT_SECRET_MASK }));
    expect(f.https_token).toBe("");
    expect(f.webhook_secret).toBe("");
  });

  test("an unchanged form sends the mask for each stored secret and nothing else secret", () => {
    const b = body(stored({ webhook_secret: GIT_SECRET_MASK }));
    expect(b.https_token).toBe(GIT_SECRET_MASK);
    expect(b.webhook_secret).toBe(GIT_SECRET_MASK);
    expect(body(stored({ https_token: "" })).https_token).toBe("");
  });

  test("a typed webhook secret is sent; Remove sends an empty one", () => {
    expect(body(stored(), { webhook_secret: "s3cret" }).webhook_secret).toBe("s3cret");
    expect(body(stored(), { clear_token: true }).https_token).toBe("");
  });
});

describe("configBody", () => {
  test("every spec field is sent, trimmed", () => {
    const b = body(stored(), { remote: "  https://h/x.git ", branch: " dev ", poll_interval: " 5m ", auto_apply_enabled: false });
    expect(Object.keys(b).sort()).toEqual(
      [
        "auto_apply_enabled",
        "auto_push_enabled",
        "author_email",
        "author_name",
        "branch",
        "enabled",
        "https_token",
        "https_username",
        "poll_enabled",
        "poll_interval",
        "remote",
        "ssh_key_path",
        "webhook_enabled",
        "webhook_secret",
      ].sort(),
    );
    expect(b).toMatchObject({ remote: "https://h/x.git", branch: "dev", poll_interval: "5m", auto_apply_enabled: false });
  });

  test("SSH clears the token and the username; HTTPS clears the key path", () => {
    const ssh = body(stored(), { auth: "ssh", ssh_key_path: "/etc/sundeck/id_ed25519", https_token: "typed" });
    expect(ssh).toMatchObject({ ssh_key_path: "/etc/sundeck/id_ed25519", https_token: "", https_username: "" });
    const https = body(stored({ ssh_key_path: "/k" }), { auth: "https", https_token: "t" });
    expect(https).toMatchObject({ ssh_key_path: "", https_token: "t" });
  });

  test("an SSH remote or a key path opens the form on SSH", () => {
    expect(formOf(stored({ remote: "git@git.example.com:ops/apps.git" })).auth).toBe("ssh");
    expect(formOf(stored({ remote: "ssh://git@h:2222/x.git" })).auth).toBe("ssh");
    expect(formOf(stored({ ssh_key_path: "/k" })).auth).toBe("ssh");
    expect(formOf(stored()).auth).toBe("https");
  });

  test("what the browser can tell for certain is refused before sending", () => {
    const f = formOf(stored());
    expect(configBody({ ...f, remote: " " }, stored())).toEqual({ error: "A remote is required to enable git sync" });
    expect(configBody({ ...f, remote: "", enabled: false }, stored())).not.toHaveProperty("error");
    expect(configBody({ ...f, branch: "a b" }, stored())).toHaveProperty("error");
    expect(configBody({ ...f, poll_interval: "soon" }, stored())).toHaveProperty("error");
    expect(configBody({ ...f, poll_interval: "60" }, stored())).toHaveProperty("error");
    expect(configBody({ ...f, poll_interval: "5 m" }, stored())).toHaveProperty("error");
    // the server's duration forms pass: Go format and days
    for (const d of ["90s", "1h30m", "1.5h", "7d", "500ms"])
      expect(configBody({ ...f, poll_interval: d }, stored())).not.toHaveProperty("error");
  });
});

describe("status words", () => {
  test("state text, with N when behind", () => {
    expect(gitStateText(status())).toBe("in sync");
    expect(gitStateText(status({ state: "behind", behind_by: 1 }))).toBe("behind by 1 commit");
    expect(gitStateText(status({ state: "behind", behind_by: 3 }))).toBe("behind by 3 commits");
    expect(gitStateText(status({ state: "conflict" }))).toBe("conflict (local state kept)");
    expect(gitStateText(status({ enabled: false, state: "disabled" }))).toBe("disabled");
  });

  test("the banner shows only while commits are pending", () => {
    expect(behindText(status())).toBeNull();
    expect(behindText(status({ state: "behind", behind_by: 2 }))).toBe(
      "The remote is 2 commits ahead. They are not applied until you apply them.",
    );
    expect(behindText(status({ enabled: false, state: "disabled", behind_by: 2 }))).toBeNull();
  });

  test("a conflict in one line, whatever of it the server gave", () => {
    expect(conflictText({ paths: ["a/.env", "a/sundeck.yml"], message: "kept local" })).toBe("a/.env, a/sundeck.yml: kept local");
    expect(conflictText({ path: "a/.env" })).toBe("a/.env");
    expect(conflictText({})).toBe("conflict");
    expect(conflictText({ path: "_global.yml", message: "_global.yml was changed here and on the remote" })).toBe(
      "_global.yml was changed here and on the remote",
    );
  });

  test("the webhook address", () => {
    expect(webhookUrl("https://deck.example.com/")).toBe("https://deck.example.com/api/git/webhook");
  });
});
