/**
 * The Git Sync page in a real Chromium against the compiled binary and a real smart-HTTP remote (Debian git's
 * http-backend, test/helpers/git-server.ts): the super-admin finds it in the navigation, saves the settings in the
 * form (source turns db; the webhook secret is never shown back, neither in the form nor in the API's answer), the
 * worker pushes the current state into the empty remote and the status shows the commit; a commit made by another user
 * of the remote is counted by Sync now (fetch-only: the behind-by-1 banner) and applied with Apply pending; a change
 * made in the dashboard (a webhook destination) is pushed and its activity entry shows the Synced badge; the same
 * alert rule changed on both sides keeps the local value and the conflict is listed on the page; an admin sees
 * the page without the settings, a viewer has no link and gets "Not available"; with the remote gone, a change's push
 * fails: the page shows the error state and the entry the Sync failed badge.
 * Needs `bun run build` first.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { type RunningBinary, startBinary } from "../helpers/binary";
import { firstRunSetup, openDashboard, pageCall, pageFetch, unlabeledControls, watchPage } from "../helpers/dashboard";
import { type GitServer, hostileWriter, otherClone, remoteFile, remoteLog, startGitServer } from "../helpers/git-server";
import { until } from "../helpers/http";
import { tempDir } from "../helpers/tmp";

const STEP_MS = 90_000;
const SECRET = "hook-secret-never-shown";

let server: RunningBinary | undefined;
let remote: GitServer | undefined;
let bare: string;
let url: string;
let browser: Browser | undefined;
let page: Page;
const pageProblems: string[] = [];

const nav = (p: Page) => p.getByRole("navigation", { name: "Main" });
const stateBadge = (p: Page) => p.getByRole("definition").locator("[data-state]");

beforeAll(async () => {
  remote = startGitServer();
  bare = remote.createBare("apps");
  server = await startBinary([], {
    cwd: tempDir("sundeck-dashboard-gitsync-e2e-"),
    env: {
      SUNDECK_MANAGEMENT_PORT: "0",
      SUNDECK_LISTEN_ADDR: "127.0.0.1:0",
      SUNDECK_HTTP_LISTEN_ADDR: "127.0.0.1:0",
      SUNDECK_TLS_MODE: "off",
      SUNDECK_RATELIMIT_BURST: "5000",
      SUNDECK_RATELIMIT_REQUESTS: "50000",
      SUNDECK_WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS: "true",
    },
  });
  url = server.url;
  ({ browser, page } = await openDashboard(pageProblems, 1000));
  await firstRunSetup(page, url);
}, STEP_MS);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await server?.stop();
  await remote?.stop();
}, STEP_MS);

describe("dashboard git sync", () => {
  test(
    "the settings saved in the form start the worker, which pushes the current state; the secret is never shown back",
    async () => {
      await nav(page).getByRole("link", { name: "Git Sync", exact: true }).click();
      await page.getByRole("heading", { level: 1, name: "Git Sync" }).waitFor();
      expect(await stateBadge(page).textContent()).toBe("disabled");
      await page.getByText("Git sync is off").waitFor();
      const settings = page.getByRole("form", { name: "Git sync settings" });
      await page.getByText("source: yaml").waitFor();
      expect(await unlabeledControls(page)).toEqual([]);

      await settings.getByLabel("Enabled", { exact: true }).check();
      await settings.getByLabel("Remote", { exact: true }).fill(remote!.url("apps"));
      await settings.getByLabel("Poll the remote", { exact: true }).uncheck();
      await settings.getByLabel("Apply remote changes automatically", { exact: true }).uncheck();
      // the browser refuses what it can tell for certain
      await settings.getByLabel("Poll interval", { exact: true }).fill("soon");
      await settings.getByRole("button", { name: "Save settings" }).click();
      await settings.getByRole("alert").filter({ hasText: "The poll interval must be a duration" }).waitFor();
      // what only the server knows is its line, shown as it says it
      await settings.getByLabel("Poll interval", { exact: true }).fill("1s");
      await settings.getByRole("button", { name: "Save settings" }).click();
      await settings
        .getByRole("alert")
        .filter({ hasText: /^Bad Request: poll_interval must be at least 5s$/ })
        .waitFor();
      await settings.getByLabel("Poll interval", { exact: true }).fill("30s");
      await settings.getByLabel("Webhook secret", { exact: true }).fill(SECRET);
      await settings.getByRole("button", { name: "Save settings" }).click();
      await page.getByText("source: db").waitFor();

      // write-only: the field is blank again and says a secret is set; the API answers the mask
      expect(await settings.getByLabel("Webhook secret", { exact: true }).inputValue()).toBe("");
      expect(await settings.getByLabel("Webhook secret", { exact: true }).getAttribute("placeholder")).toBe(
        "set (leave blank to keep)",
      );
      await settings.getByLabel("Remove the stored webhook secret", { exact: true }).waitFor();
      const cfg = await pageFetch(page, "/api/git/config");
      expect(cfg.status).toBe(200);
      expect(cfg.body).toMatchObject({ source: "db", enabled: true, webhook_secret: "********", auto_apply_enabled: false });
      expect(JSON.stringify(cfg.body)).not.toContain(SECRET);
      expect(await page.content()).not.toContain(SECRET);

      // the first sync pushes the current state into the empty remote
      await until(async () => remoteLog(bare).length > 0, { timeout: 30_000, what: "the first push" });
      const sha: string = await until(async () => (await pageFetch(page, "/api/git/status")).body.last_commit_sha, {
        timeout: 15_000,
        what: "the first commit in the status",
      });
      expect(sha).toMatch(/^[0-9a-f]{40}$/);
      await until(async () => (await stateBadge(page).textContent()) === "in sync", { timeout: 15_000, what: "in sync" });
      await page.getByRole("definition").getByText(sha.slice(0, 12), { exact: true }).waitFor();
      expect(remoteFile(bare, ".gitignore").length).toBeGreaterThan(0);
      // no secret went to the remote either
      expect(remoteFile(bare, "_global.yml")).not.toContain(SECRET);
    },
    STEP_MS,
  );

  test(
    "a remote commit is counted by Sync now (banner: 1 commit ahead) and applied with Apply pending",
    async () => {
      const global = remoteFile(bare, "_global.yml");
      await otherClone(bare).commitAndPush({ "_global.yml": `${global}# reviewed by a colleague\n` }, "a note from a colleague");
      await page.getByRole("button", { name: "Sync now" }).click();
      const banner = page.getByRole("status").filter({ hasText: "The remote is 1 commit ahead" });
      await banner.waitFor({ timeout: 20_000 });
      expect(await stateBadge(page).textContent()).toBe("behind by 1 commit");
      await banner.getByRole("button", { name: "Apply pending" }).click();
      await banner.waitFor({ state: "detached", timeout: 20_000 });
      await until(async () => (await stateBadge(page).textContent()) === "in sync", { timeout: 15_000, what: "in sync" });
      expect((await pageFetch(page, "/api/git/status")).body).toMatchObject({ state: "in_sync", behind_by: 0 });
    },
    STEP_MS,
  );

  test(
    "a change made in the dashboard is pushed and its activity entry shows Synced",
    async () => {
      const before = remoteLog(bare).length;
      expect(
        await pageCall(page, "POST", "/api/webhooks", {
          name: "ops-pager",
          kind: "generic",
          url: "http://127.0.0.1:9/hook",
          enabled: true,
        }),
      ).toBe(201);
      await until(async () => remoteLog(bare).length > before, { timeout: 30_000, what: "the change to be pushed" });
      expect(remoteFile(bare, "_global.yml")).toContain("ops-pager");

      await nav(page).getByRole("link", { name: "Activity", exact: true }).click();
      await page.getByRole("heading", { level: 1, name: "Activity" }).waitFor();
      const entry = page.locator("li.entry").filter({ hasText: "ops-pager" }).first();
      await entry.waitFor();
      // the list was read once; reload until the badge the worker set shows
      await until(
        async () => {
          if ((await entry.locator(".badge.sync-synced").count()) > 0) return true;
          await page.reload();
          await page.getByRole("heading", { level: 1, name: "Activity" }).waitFor();
          return false;
        },
        { timeout: 20_000, what: "the Synced badge" },
      );
      expect(await entry.locator(".badge.sync-synced").textContent()).toBe("Synced");
    },
    STEP_MS,
  );

  test(
    "both sides change the same file: the local change is kept and the conflict is listed on the page",
    async () => {
      // back to applying remote changes (saving again with the secret left blank keeps it)
      await nav(page).getByRole("link", { name: "Git Sync", exact: true }).click();
      const settings = page.getByRole("form", { name: "Git sync settings" });
      await settings.getByLabel("Apply remote changes automatically", { exact: true }).check();
      await settings.getByRole("button", { name: "Save settings" }).click();
      await until(async () => (await pageFetch(page, "/api/git/config")).body.auto_apply_enabled === true, {
        timeout: 10_000,
        what: "the settings saved",
      });
      expect((await pageFetch(page, "/api/git/config")).body.webhook_secret).toBe("********");
      await until(async () => (await stateBadge(page).textContent()) === "in sync", { timeout: 20_000, what: "in sync" });

      // an alert rule, pushed; then changed on the remote and here
      const rule = {
        name: "disk-low",
        app_slug: null,
        kind: "disk",
        threshold: 10,
        duration: "5m",
        webhook_ids: [],
        enabled: true,
      };
      const created = await pageFetch(page, "/api/alerts/rules", { method: "POST", body: rule });
      expect(created.status).toBe(201);
      await until(() => remoteFile(bare, "_global.yml").includes("disk-low"), { timeout: 20_000, what: "the rule pushed" });
      const other = otherClone(bare);
      const text = await Bun.file(`${other.dir}/_global.yml`).text();
      expect(text).toContain("threshold: 10");
      await other.commitAndPush({ "_global.yml": text.replace("threshold: 10", "threshold: 30") }, "theirs");
      expect(await pageCall(page, "PUT", `/api/alerts/rules/${created.body.id}`, { ...rule, threshold: 15 })).toBe(200);

      const list = page.getByRole("list", { name: "Git sync conflicts" });
      await list.getByRole("listitem").filter({ hasText: "_global.yml" }).first().waitFor({ timeout: 30_000 });
      expect(await stateBadge(page).textContent()).toBe("conflict (local state kept)");
      // local won: the remote ends up with ours
      await until(() => remoteFile(bare, "_global.yml").includes("threshold: 15"), { timeout: 20_000, what: "ours pushed" });
    },
    STEP_MS,
  );

  test(
    "a hostile remote commit: the page lists what was skipped, and sync goes on",
    async () => {
      const w = hostileWriter(bare);
      w.commitWith([{ mode: "40000", name: "..", oid: w.dirWith("escape.yml", "x: 1\n") }], "a hostile entry");
      await page.getByRole("button", { name: "Sync now" }).click();
      const list = page.getByRole("list", { name: "Skipped from the remote" });
      await list.getByRole("listitem").filter({ hasText: "skipped: an unsafe name" }).waitFor({ timeout: 30_000 });
      expect(await list.getByRole("listitem").first().locator("code").textContent()).toBe("..");
      await until(async () => (await stateBadge(page).textContent()) !== "error", { timeout: 5_000, what: "no error" });
      if (process.env.SUNDECK_SHOTS)
        await page.screenshot({ path: `${process.env.SUNDECK_SHOTS}/git-skipped.png`, fullPage: true });
    },
    STEP_MS,
  );

  test(
    "an admin sees the status without the settings; a viewer has no link and gets Not available",
    async () => {
      for (const [username, role] of [
        ["ops", "admin"],
        ["guest", "viewer"],
      ] as const) {
        expect(await pageCall(page, "POST", "/api/users", { username, password: "second-password", role })).toBe(201);
      }
      const other = await browser!.newContext({ viewport: { width: 390, height: 844 }, locale: "en-US" });
      try {
        const p = await other.newPage();
        watchPage(p, pageProblems);
        const login = async (username: string) => {
          await p.goto(url);
          const form = p.getByRole("form", { name: "Log in" });
          await form.getByLabel("Username", { exact: true }).fill(username);
          await form.getByLabel("Password", { exact: true }).fill("second-password");
          await form.getByRole("button", { name: "Log in" }).click();
          await p.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
        };
        await login("ops");
        await p.goto(`${url}/git`);
        await p.getByRole("heading", { level: 1, name: "Git Sync" }).waitFor();
        await stateBadge(p).waitFor({ timeout: 15_000 });
        await p.getByRole("button", { name: "Sync now" }).waitFor();
        expect(await p.getByRole("form", { name: "Git sync settings" }).count()).toBe(0);
        // the page fits a phone
        expect(await p.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);

        await other.clearCookies();
        await login("guest");
        expect(await nav(p).getByRole("link", { name: "Git Sync" }).count()).toBe(0);
        await p.goto(`${url}/git`);
        await p.getByRole("heading", { level: 1, name: "Not available" }).waitFor();
      } finally {
        await other.close();
      }
      expect(pageProblems).toEqual([]);
    },
    STEP_MS,
  );

  test(
    "a remote that stops answering: the push fails, the page shows the error and the entry shows Sync failed",
    async () => {
      await remote!.stop();
      expect(
        await pageCall(page, "POST", "/api/webhooks", {
          name: "night-pager",
          kind: "generic",
          url: "http://127.0.0.1:9/night",
          enabled: true,
        }),
      ).toBe(201);
      await nav(page).getByRole("link", { name: "Git Sync", exact: true }).click();
      await until(async () => (await stateBadge(page).textContent()) === "error", { timeout: 30_000, what: "the error state" });
      const error = (await pageFetch(page, "/api/git/status")).body.last_error as string;
      expect(error.length).toBeGreaterThan(0);
      await page.getByRole("definition").getByText(error, { exact: true }).waitFor();
      // the failed attempt is newer than the last good sync, and shown as such
      await page.getByRole("term").filter({ hasText: "Last attempt" }).waitFor();

      await nav(page).getByRole("link", { name: "Activity", exact: true }).click();
      const entry = page.locator("li.entry").filter({ hasText: "night-pager" }).first();
      await until(
        async () => {
          await page.reload();
          await entry.waitFor();
          return (await entry.locator(".badge.sync-failed").count()) > 0;
        },
        { timeout: 20_000, what: "the Sync failed badge" },
      );
      expect(await entry.locator(".badge.sync-failed").textContent()).toBe("Sync failed");
      // the entry's page says why
      await entry.getByRole("link").click();
      await page.getByText(error).first().waitFor();
      expect(pageProblems).toEqual([]);
    },
    STEP_MS,
  );
});
