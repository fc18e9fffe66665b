/**
 * The embedded dashboard in a real Chromium against the compiled binary, started with no config file in an empty
 * directory (the embedded default): first-run setup through users, API keys, activity, live process logs, theme,
 * password change, logout and login. Needs `bun run build` first.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type RunningBinary, startBinary } from "../helpers/binary";
import { ADMIN, ADMIN_PASSWORD, openDashboard, pageFetch, unlabeledControls, watchPage } from "../helpers/dashboard";
import { until } from "../helpers/http";
import { tempDir } from "../helpers/tmp";

const NEW_ADMIN_PASSWORD = "changed-password-42";
const KEY_PATTERN = /^sd_[0-9a-f]{64}$/;
/** Per test: a browser flow with a server restart needs more than bun's 5 s default. */
const STEP_MS = 60_000;

/** Environment of the server: embedded default, free ports; the API limit is raised for the 60 entries we add. */
function serverEnv(port = 0): Record<string, string> {
  return {
    SUNDECK_MANAGEMENT_PORT: String(port),
    SUNDECK_LISTEN_ADDR: "127.0.0.1:0",
    SUNDECK_RATELIMIT_BURST: "1000",
    SUNDECK_RATELIMIT_REQUESTS: "10000",
  };
}

let cwd: string;
let server: RunningBinary | undefined;
let url: string;
let browser: Browser | undefined;
let context: BrowserContext;
let page: Page;
let apiKey = "";
/** Uncaught page errors and CSP violations: both mean the dashboard is broken somewhere. */
const pageProblems: string[] = [];

/** An API call from outside the browser. */
async function apiCall(method: string, path: string, opts: { bearer?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = {};
  if (opts.bearer) headers.authorization = `Bearer ${opts.bearer}`;
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(url + path, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const text = await res.text();
  return {
    status: res.status,
    text,
    json: (res.headers.get("content-type") ?? "").includes("json") ? JSON.parse(text) : undefined,
  };
}

/** Make the server write a `login failed` warning for `username`. */
async function failLogin(username: string) {
  const r = await apiCall("POST", "/api/auth/login", { body: { username, password: "not-the-password" } });
  expect(r.status).toBe(401);
}

async function openNav(name: string) {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name, exact: true }).click();
  await page.getByRole("heading", { level: 1, name }).waitFor();
}

async function openUserMenu() {
  await page.getByRole("button", { name: `Account menu for ${ADMIN}` }).click();
}

beforeAll(async () => {
  cwd = tempDir("sundeck-dashboard-e2e-");
  // startBinary passes only PATH and HOME besides `env`, so SUNDECK_CONFIG from the outside cannot leak in
  server = await startBinary([], { cwd, env: serverEnv() });
  url = server.url;
  expect(server.output()).toContain('config="embedded default"');
  ({ browser, context, page } = await openDashboard(pageProblems, 800));
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: url });
}, STEP_MS);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await server?.stop();
}, STEP_MS);

describe("dashboard", () => {
  test(
    "first run shows the setup form and signs the new super-admin in",
    async () => {
      await page.goto(url);
      await page.getByRole("heading", { name: "Create the administrator account" }).waitFor();
      expect(await unlabeledControls(page)).toEqual([]);

      const setup = page.getByRole("form", { name: "First-run setup" });
      await setup.getByLabel("Username").fill(ADMIN);
      await setup.getByLabel("Password", { exact: true }).fill("short");
      await setup.getByLabel("Confirm password").fill("short");
      await setup.getByRole("button", { name: "Create administrator" }).click();
      // the server's own one-line reason is what the user sees
      await setup.getByRole("alert").filter({ hasText: "Bad Request: password must be at least 8 characters" }).waitFor();

      await setup.getByLabel("Password", { exact: true }).fill(ADMIN_PASSWORD);
      await setup.getByLabel("Confirm password").fill(`${ADMIN_PASSWORD}x`);
      await setup.getByRole("button", { name: "Create administrator" }).click();
      await setup.getByRole("alert").filter({ hasText: "The passwords do not match" }).waitFor();

      await setup.getByLabel("Confirm password").fill(ADMIN_PASSWORD);
      await setup.getByRole("button", { name: "Create administrator" }).click();
      await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
      await page.getByRole("button", { name: `Account menu for ${ADMIN}` }).waitFor();
      const me = await pageFetch(page, "/api/me");
      expect(me).toEqual({ status: 200, body: expect.objectContaining({ username: ADMIN, role: "super_admin" }) });
      // the recent feed already has the setup entry
      await page.getByRole("list", { name: "Recent activity" }).getByText("admin completed first-run setup").waitFor();
      // super-admin pages are in the navigation
      for (const name of ["Users", "Settings", "Process logs"]) {
        await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name }).waitFor();
      }
    },
    STEP_MS,
  );

  test(
    "creates users, changes a role, grants and revokes app access, resets a password, deletes a user",
    async () => {
      await openNav("Users");
      expect(await unlabeledControls(page)).toEqual([]);
      const create = page.getByRole("form", { name: "Create user" });
      for (const [name, role] of [
        ["alice", "viewer"],
        ["bob", "manage"],
      ]) {
        await create.getByLabel("Username").fill(name);
        await create.getByLabel("Initial password").fill(`${name}-password-1`);
        await create.getByLabel("Role").selectOption(role);
        await create.getByRole("button", { name: "Create user" }).click();
        await page.getByRole("listitem", { name }).waitFor();
      }

      const alice = page.getByRole("listitem", { name: "alice" });
      await alice.getByLabel("Grant app to alice").fill("Not A Slug");
      await alice.getByRole("button", { name: "Grant", exact: true }).click();
      await alice.getByRole("alert").filter({ hasText: "app slug" }).waitFor();

      for (const slug of ["blog", "shop"]) {
        await alice.getByLabel("Grant app to alice").fill(slug);
        await alice.getByRole("button", { name: "Grant", exact: true }).click();
        await alice.getByRole("list", { name: "Apps alice can reach" }).getByText(slug, { exact: true }).waitFor();
      }
      await alice.getByRole("button", { name: "Revoke alice's access to shop" }).click();
      await until(async () => (await alice.getByRole("button", { name: "Revoke alice's access to shop" }).count()) === 0, {
        what: "shop grant to disappear",
      });

      await alice.getByLabel("Role of alice").selectOption("manage");
      await until(
        async () => {
          const users = (await pageFetch(page, "/api/users")).body as any[];
          return users.find((u) => u.username === "alice")?.role === "manage";
        },
        { what: "alice to be manage" },
      );

      await alice.getByRole("button", { name: "Reset password of alice" }).click();
      const reset = page.getByRole("dialog", { name: "Reset password of alice" });
      await reset.getByLabel("New password for alice").fill("alice-new-password");
      await reset.getByRole("button", { name: "Reset password" }).click();
      await reset.waitFor({ state: "hidden" });
      const login = await apiCall("POST", "/api/auth/login", { body: { username: "alice", password: "alice-new-password" } });
      expect(login.status).toBe(200);

      await page.getByRole("listitem", { name: "bob" }).getByRole("button", { name: "Delete bob" }).click();
      const confirm = page.getByRole("dialog", { name: "Delete bob?" });
      await confirm.getByRole("button", { name: "Delete user" }).click();
      await page.getByRole("listitem", { name: "bob" }).waitFor({ state: "detached" });

      // what the page shows is what the server stored
      await page.reload();
      await page.getByRole("listitem", { name: "alice" }).waitFor();
      expect(await page.getByLabel("Role of alice").inputValue()).toBe("manage");
      expect(await page.getByRole("list", { name: "Apps alice can reach" }).textContent()).toContain("blog");
      expect(await page.getByRole("listitem", { name: "bob" }).count()).toBe(0);
      const users = (await pageFetch(page, "/api/users")).body as any[];
      expect(users.map((u) => [u.username, u.role, u.app_access])).toEqual([
        ["admin", "super_admin", []],
        ["alice", "manage", ["blog"]],
      ]);
    },
    STEP_MS,
  );

  test(
    "creates an API key, shows it once with a copy button, and the key works",
    async () => {
      await openNav("API keys");
      expect(await unlabeledControls(page)).toEqual([]);
      const form = page.getByRole("form", { name: "Create API key" });
      await form.getByLabel("Name").fill("ci");
      await form.getByLabel("Expires").selectOption("30");
      await form.getByRole("button", { name: "Create key" }).click();

      await page.getByText("You will not see it again").waitFor();
      apiKey = await page.getByRole("textbox", { name: "New API key", exact: true }).inputValue();
      expect(apiKey).toMatch(KEY_PATTERN);
      await page.getByRole("button", { name: "Copy key" }).click();
      await page.getByRole("button", { name: "Copied", exact: true }).waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(apiKey);

      const me = await apiCall("GET", "/api/me", { bearer: apiKey });
      expect(me.status).toBe(200);
      expect(me.json).toMatchObject({ username: ADMIN, role: "super_admin" });

      await page.getByRole("button", { name: "Done, I have copied it" }).click();
      const row = page.getByRole("row", { name: "ci", exact: true });
      await row.waitFor();
      const cells = await row.getByRole("cell").allInnerTexts();
      expect(cells[0]).toBe(`${apiKey.slice(0, 10)}…`);
      expect(cells[2]).toBe("in 30 days");
      expect(await page.content()).not.toContain(apiKey);
      await page.reload();
      await page.getByRole("row", { name: "ci", exact: true }).waitFor();
      expect(await page.content()).not.toContain(apiKey);

      // a second key, revoked from the list, stops working
      await form.getByLabel("Name").fill("temporary");
      await form.getByRole("button", { name: "Create key" }).click();
      const temp = await page.getByRole("textbox", { name: "New API key", exact: true }).inputValue();
      await page.getByRole("button", { name: "Done, I have copied it" }).click();
      await page.getByRole("row", { name: "temporary" }).getByRole("button", { name: "Revoke temporary" }).click();
      await page.getByRole("dialog", { name: 'Revoke "temporary"?' }).getByRole("button", { name: "Revoke key" }).click();
      await page.getByRole("row", { name: "temporary" }).waitFor({ state: "detached" });
      expect((await apiCall("GET", "/api/me", { bearer: temp })).status).toBe(401);
    },
    STEP_MS,
  );

  test(
    "lists activity with filters and infinite scroll, and shows an entry's diff",
    async () => {
      // enough entries for more than one page (50): grants to app-1..app-60, made with the API key
      const aliceId = ((await apiCall("GET", "/api/users", { bearer: apiKey })).json as any[]).find(
        (u) => u.username === "alice",
      ).id;
      for (let i = 1; i <= 60; i++) {
        const r = await apiCall("POST", `/api/users/${aliceId}/access`, { bearer: apiKey, body: { app_slug: `app-${i}` } });
        expect(r.status).toBe(204);
      }
      const all = (await apiCall("GET", "/api/activity?limit=200", { bearer: apiKey })).json.entries as any[];
      expect(all.length).toBeGreaterThan(60);

      await openNav("Activity");
      expect(await unlabeledControls(page)).toEqual([]);
      const list = page.getByRole("list", { name: "Activity entries" });
      const items = list.getByRole("listitem");
      await until(async () => (await items.count()) === 50, { what: "the first page of 50" });
      expect(await page.getByText("End of the activity log").count()).toBe(0);

      // scrolling to the end loads the next page through the observer (no click)
      await page.locator(".list-end").scrollIntoViewIfNeeded();
      await until(async () => (await items.count()) === all.length, { what: `all ${all.length} entries`, timeout: 10_000 });
      await page.getByText("End of the activity log").waitFor();
      const ids = await list.locator("li[data-id]").evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-id"))));
      expect(ids).toEqual(all.map((e) => e.id));

      // category filter: several at once, reflected in the URL
      const filters = page.getByRole("form", { name: "Filter activity" });
      await filters.getByRole("checkbox", { name: "auth" }).check();
      await until(async () => new URL(page.url()).searchParams.get("categories") === "auth", { what: "auth in the URL" });
      await until(async () => (await items.count()) === all.filter((e) => e.category === "auth").length, {
        what: "auth entries",
      });
      await filters.getByRole("checkbox", { name: "access" }).check();
      await until(async () => (await items.count()) >= 50, { what: "auth and access entries" });
      const shown = new Set(await list.locator(".badge.cat").allInnerTexts());
      expect(shown.has("access")).toBe(true);
      expect([...shown].filter((c) => c !== "access" && c !== "auth")).toEqual([]);
      expect(new URL(page.url()).searchParams.get("categories")).toBe("access,auth");

      // app filter
      await filters.getByRole("button", { name: "Clear filters" }).click();
      await filters.getByLabel("App").fill("blog");
      await until(async () => (await items.count()) === 1, { what: "the one blog entry" });
      await list.getByText("admin granted alice access to blog").waitFor();

      // an entry with snapshots on both sides: changed and unchanged fields
      await filters.getByRole("button", { name: "Clear filters" }).click();
      await filters.getByRole("checkbox", { name: "system" }).check();
      await list.getByText("admin updated user alice: role viewer → manage").click();
      await page.getByRole("heading", { level: 1, name: "admin updated user alice: role viewer → manage" }).waitFor();
      const role = page.locator("tr.diff-row", { has: page.getByRole("rowheader", { name: "role", exact: true }) });
      expect(await role.getAttribute("data-kind")).toBe("changed");
      expect(await role.locator("del").textContent()).toBe("viewer");
      expect(await role.locator("ins").textContent()).toBe("manage");
      const username = page.locator("tr.diff-row", { has: page.getByRole("rowheader", { name: "username", exact: true }) });
      expect(await username.getAttribute("data-kind")).toBe("same");

      // an entry with only an after snapshot: every field added
      await page.getByRole("link", { name: "← Activity" }).click();
      await list.getByText('admin created API key "ci"').first().click();
      await page.getByRole("heading", { name: "Changes" }).waitFor();
      const kinds = await page
        .locator("tr.diff-row")
        .evaluateAll((rows) => rows.map((r) => [r.querySelector("th")?.textContent, r.getAttribute("data-kind")]));
      expect(kinds).toContainEqual(["name", "added"]);
      expect(kinds.every(([, k]) => k === "added")).toBe(true);
      expect(await page.locator("tr.diff-row ins").allInnerTexts()).toContain("ci");
    },
    STEP_MS,
  );

  test(
    "streams process logs live, filters them, pauses, and reconnects after a restart",
    async () => {
      await openNav("Process logs");
      const status = page.getByRole("status").filter({ hasText: /Live|Connecting|reconnecting/ });
      await status.filter({ hasText: "Live" }).waitFor();
      const view = page.getByRole("log", { name: "Process log lines" });
      await view.getByText("management api and dashboard on").first().waitFor();

      const ghost = `ghost-${crypto.randomUUID().slice(0, 8)}`;
      expect(await view.getByText(ghost).count()).toBe(0);
      await failLogin(ghost);
      await view.getByText(`login failed username=${ghost}`).waitFor();

      await page.getByLabel("Filter").fill(ghost);
      await until(async () => (await view.locator(".log-line").count()) === 1, { what: "only the matching line" });
      await page.getByLabel("Filter").fill("");

      await page.getByRole("button", { name: "Pause" }).click();
      expect(await page.getByRole("button", { name: "Resume" }).getAttribute("aria-pressed")).toBe("true");
      await page.getByRole("button", { name: "Resume" }).click();

      // the server goes away (1001): the page says so, retries, and picks up the new process's lines
      const port = new URL(url).port;
      await server!.stop();
      server = undefined;
      await page.getByRole("status").filter({ hasText: "reconnecting" }).waitFor();
      server = await startBinary([], { cwd, env: serverEnv(Number(port)) });
      expect(server.url).toBe(url);
      await status.filter({ hasText: "Live" }).waitFor({ timeout: 20_000 });
      const ghost2 = `ghost-${crypto.randomUUID().slice(0, 8)}`;
      await failLogin(ghost2);
      await view.getByText(`login failed username=${ghost2}`).waitFor();
      // the replayed buffer did not duplicate what was already on screen
      expect(await view.getByText(`login failed username=${ghost}`).count()).toBe(1);
    },
    STEP_MS,
  );

  test(
    "follows the system theme, and a chosen dark theme survives a reload",
    async () => {
      const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      const isDark = (rgb: string) => {
        const [r, g, b] = (rgb.match(/\d+/g) ?? []).map(Number);
        return r + g + b < 150;
      };
      await page.emulateMedia({ colorScheme: "dark" });
      expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBeUndefined();
      expect(isDark(await bg())).toBe(true);
      await page.emulateMedia({ colorScheme: "light" });
      expect(isDark(await bg())).toBe(false);

      // with no choice stored, the toggle shows the system's theme
      const toggle = page.getByRole("button", { name: "Dark theme" });
      await until(async () => (await toggle.getAttribute("aria-pressed")) === "false", { what: "toggle to follow the system" });
      await toggle.click();
      expect(await toggle.getAttribute("aria-pressed")).toBe("true");
      expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe("dark");
      expect(isDark(await bg())).toBe(true);

      await page.reload();
      await page.getByRole("heading", { level: 1 }).first().waitFor();
      expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe("dark");
      expect(await page.evaluate(() => localStorage.getItem("sundeck.theme"))).toBe("dark");
      expect(isDark(await bg())).toBe(true);
      expect(await page.getByRole("button", { name: "Dark theme" }).getAttribute("aria-pressed")).toBe("true");

      // keyboard focus is visible
      await page.getByRole("button", { name: "Dark theme" }).focus();
      await page.keyboard.press("Tab");
      const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
      expect(outline).not.toBe("none");
    },
    STEP_MS,
  );

  test(
    "works at phone width",
    async () => {
      await page.setViewportSize({ width: 375, height: 740 });
      try {
        for (const name of [
          "Overview",
          "Apps",
          "Alerts",
          "Webhooks",
          "Activity",
          "API keys",
          "Users",
          "Settings",
          "Process logs",
        ]) {
          await openNav(name);
          const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
          expect({ page: name, scroll }).toEqual({ page: name, scroll: inner });
        }
      } finally {
        await page.setViewportSize({ width: 1280, height: 800 });
      }
    },
    STEP_MS,
  );

  test(
    "changes the password, logs out, and logs back in",
    async () => {
      await openNav("Overview");
      await openUserMenu();
      await page.getByRole("button", { name: "Change password" }).click();
      const dialog = page.getByRole("dialog", { name: "Change password" });
      expect(await unlabeledControls(page)).toEqual([]);
      // a wrong current password is the server's 400, shown in the dialog; the session stays
      await dialog.getByLabel("Current password").fill("not-my-password");
      await dialog.getByLabel("New password", { exact: true }).fill(NEW_ADMIN_PASSWORD);
      await dialog.getByLabel("Confirm new password").fill(NEW_ADMIN_PASSWORD);
      await dialog.getByRole("button", { name: "Change password" }).click();
      await dialog.getByRole("alert").filter({ hasText: "Bad Request: current_password is wrong" }).waitFor();
      expect((await pageFetch(page, "/api/me")).status).toBe(200);
      await dialog.getByLabel("Current password").fill(ADMIN_PASSWORD);
      await dialog.getByLabel("New password", { exact: true }).fill(NEW_ADMIN_PASSWORD);
      await dialog.getByLabel("Confirm new password").fill(NEW_ADMIN_PASSWORD);
      await dialog.getByRole("button", { name: "Change password" }).click();
      await dialog.waitFor({ state: "hidden" });
      // the fresh session cookie the server set keeps this browser signed in
      expect((await pageFetch(page, "/api/me")).status).toBe(200);

      await openUserMenu();
      await page.getByRole("button", { name: "Log out" }).click();
      await page.getByRole("heading", { name: "Log in" }).waitFor();
      expect((await pageFetch(page, "/api/me")).status).toBe(401);

      const form = page.getByRole("form", { name: "Log in" });
      await form.getByLabel("Username").fill(ADMIN);
      await form.getByLabel("Password").fill(ADMIN_PASSWORD);
      await form.getByRole("button", { name: "Log in" }).click();
      await form.getByRole("alert").filter({ hasText: "Unauthorized: invalid credentials" }).waitFor();

      await form.getByLabel("Password").fill(NEW_ADMIN_PASSWORD);
      await form.getByRole("button", { name: "Log in" }).click();
      await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
      expect((await pageFetch(page, "/api/me")).body).toMatchObject({ username: ADMIN });
      const feed = page.getByRole("list", { name: "Recent activity" });
      await feed.getByText("admin logged in").waitFor();
      expect(await feed.getByRole("listitem").count()).toBeLessThanOrEqual(8);
    },
    STEP_MS,
  );

  test(
    "hides the super-admin pages from other roles",
    async () => {
      const other = await browser!.newContext({ locale: "en-US" });
      try {
        const p = await other.newPage();
        watchPage(p, pageProblems);
        await p.goto(url);
        const form = p.getByRole("form", { name: "Log in" });
        await form.getByLabel("Username").fill("alice");
        await form.getByLabel("Password").fill("alice-new-password");
        await form.getByRole("button", { name: "Log in" }).click();
        await p.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
        const nav = p.getByRole("navigation", { name: "Main" });
        expect(await nav.getByRole("link").allInnerTexts()).toEqual([
          "Overview",
          "Apps",
          "Alerts",
          "Webhooks",
          "Activity",
          "API keys",
        ]);
        // alice sees the entries of the app granted to her, and her own logins
        await p.getByRole("list", { name: "Recent activity" }).getByText("alice logged in").waitFor();
        await p.goto(`${url}/users`);
        await p.getByRole("heading", { level: 1, name: "Not available" }).waitFor();
      } finally {
        await other.close();
      }
    },
    STEP_MS,
  );

  test(
    "raised no page errors or CSP violations",
    () => {
      expect(pageProblems).toEqual([]);
    },
    STEP_MS,
  );
});
