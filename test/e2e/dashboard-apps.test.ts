/**
 * The apps part of the dashboard in a real Chromium against the compiled binary and a real Docker engine: create an
 * app with live deploy output, a refused privileged compose, an env change that makes a new version, stop/start,
 * container logs, version diff and rollback, remove with volumes. Needs `bun run build` first and a running dockerd.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Locator, Page } from "playwright-core";
import { freePort } from "../helpers/apps";
import { type RunningBinary, startBinary } from "../helpers/binary";
import { firstRunSetup, openDashboard, pageCall, pageFetch, unlabeledControls, watchPage } from "../helpers/dashboard";
import { docker, ensureTestImages, removeProject, requireDocker } from "../helpers/docker";
import { until } from "../helpers/http";
import { tempDir } from "../helpers/tmp";

/** Per test: deploys wait for the containers to settle. */
const STEP_MS = 120_000;
/** Deploys and actions on the real engine. */
const DEPLOY_MS = 90_000;

const RUN = Date.now().toString(36);
const SLUG = `uitest-web-${RUN}`;
const BAD_SLUG = `uitest-bad-${RUN}`;
const SLUGS = [SLUG, BAD_SLUG];

let cwd: string;
let server: RunningBinary | undefined;
let url: string;
let browser: Browser | undefined;
let page: Page;
let port: number;
const pageProblems: string[] = [];

/** The web test image with a named volume, printing the GREETING env value to stderr first (so the logs have a line). */
function compose(p: number, extra = ""): string {
  return `services:
  web:
    image: sundeck-test/web:latest
    command: ["sh", "-c", "echo greeting \${GREETING:-unset} >&2; exec /entry.sh"]
    ports:
      - "${p}:8080"
    volumes:
      - data:/data
    stop_grace_period: 1s
${extra}volumes:
  data: {}
`;
}

/** GET the published port of the app: the status, or 0 when nothing answers. */
async function hit(p: number): Promise<number> {
  try {
    const r = await fetch(`http://127.0.0.1:${p}/`, { signal: AbortSignal.timeout(2000) });
    await r.text();
    return r.status;
  } catch {
    return 0;
  }
}

/** Volumes of a compose project, by label. */
async function volumesOf(slug: string): Promise<string[]> {
  const r = await docker("volume", "ls", "--filter", `label=com.docker.compose.project=sundeck-${slug}`, "--format", "{{.Name}}");
  return r.stdout.split("\n").filter(Boolean);
}

/** Containers of a compose project, by label. */
async function containersOf(slug: string): Promise<string[]> {
  const r = await docker("ps", "-a", "--filter", `label=com.docker.compose.project=sundeck-${slug}`, "--format", "{{.Names}}");
  return r.stdout.split("\n").filter(Boolean);
}

const appHeader = () => page.locator(".app-title");
const appTab = (name: string) => page.getByRole("navigation", { name: "App sections" }).getByRole("link", { name, exact: true });
const actions = () => page.getByRole("group", { name: "App actions" });

/** The outcome line of the operation panel labelled `label` ("Deploy succeeded"). */
function outcome(label: string): Locator {
  return page.getByRole("region", { name: `${label} output` }).getByRole("status");
}

async function waitStatus(status: string) {
  await appHeader().getByText(`status: ${status}`, { exact: true }).waitFor({ timeout: DEPLOY_MS });
}

beforeAll(async () => {
  await requireDocker();
  await ensureTestImages();
  port = await freePort();
  cwd = tempDir("sundeck-dashboard-apps-e2e-");
  server = await startBinary([], {
    cwd,
    env: {
      SUNDECK_MANAGEMENT_PORT: "0",
      SUNDECK_LISTEN_ADDR: "127.0.0.1:0",
      SUNDECK_RATELIMIT_BURST: "5000",
      SUNDECK_RATELIMIT_REQUESTS: "50000",
    },
  });
  url = server.url;
  ({ browser, page } = await openDashboard(pageProblems, 900));
  await firstRunSetup(page, url);
}, STEP_MS);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await server?.stop();
  for (const slug of SLUGS) await removeProject(`sundeck-${slug}`, { volumes: true });
}, STEP_MS);

describe("dashboard apps", () => {
  test(
    "creates an app from the dashboard, shows the live deploy output, and the app runs",
    async () => {
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Apps", exact: true }).click();
      await page.getByRole("heading", { level: 1, name: "Apps" }).waitFor();
      await page.getByRole("heading", { name: "No apps yet" }).waitFor();
      await page.getByRole("link", { name: "New app" }).first().click();
      await page.getByRole("heading", { level: 1, name: "New app" }).waitFor();
      // the page opens on the template gallery; a compose file of one's own is the second source
      await page.getByRole("list", { name: "Template list" }).waitFor();
      await page.getByRole("navigation", { name: "Source" }).getByRole("link", { name: "Blank compose file" }).click();
      const form = page.getByRole("form", { name: "New app" });

      // the browser's own checks: slug rule and YAML, with the line marked
      await form.getByLabel("Slug").fill("Not_A_Slug");
      await form.getByLabel("Compose file").fill("services:\n  web:\n    image: [\n");
      await form.getByRole("button", { name: "Validate" }).click();
      await form.getByRole("alert").filter({ hasText: "lowercase letters and digits" }).waitFor();
      await form.getByRole("list", { name: "Compose problems" }).getByText("Line 4").waitFor();

      // Tab in the editor indents instead of leaving it
      const editor = form.getByLabel("Compose file");
      await editor.fill("");
      await editor.press("Tab");
      expect(await editor.inputValue()).toBe("  ");
      expect(await editor.evaluate((el) => el === document.activeElement)).toBe(true);

      await form.getByLabel("Slug").fill(SLUG);
      await editor.fill(compose(port));
      await form.getByRole("button", { name: "Add variable" }).click();
      await form.getByLabel("Name of variable 1").fill("GREETING");
      const value = form.getByLabel("Value of GREETING", { exact: true });
      await value.fill("hello-1");
      expect(await value.getAttribute("type")).toBe("password");
      await form.getByRole("button", { name: "Show value of GREETING" }).click();
      expect(await value.getAttribute("type")).toBe("text");
      await form.getByRole("button", { name: "Validate" }).click();
      await form.getByText("No problems found in the browser").waitFor();
      expect(await unlabeledControls(page)).toEqual([]);

      await form.getByRole("button", { name: "Deploy" }).click();
      const output = page.getByRole("log", { name: "Deploy output lines" });
      // live lines while the deploy runs, each with its compose action
      await output.getByText(`deploying ${SLUG} version 1`).waitFor({ timeout: DEPLOY_MS });
      await output.locator(".term-act", { hasText: "up" }).first().waitFor();
      await outcome("Deploy").getByText("Deploy succeeded").waitFor({ timeout: DEPLOY_MS });
      await output.getByText("deployed version 1").waitFor();

      expect(await until(async () => (await hit(port)) === 200, { timeout: 30_000, what: "the app to answer" })).toBe(true);

      await page.getByRole("link", { name: `Open ${SLUG}` }).click();
      await page.getByRole("heading", { level: 1, name: SLUG }).waitFor();
      await waitStatus("running");
      // a published port cannot scale: the control says why
      const web = page.getByRole("region", { name: "Service web" });
      await web.getByText("sundeck-test/web:latest").waitFor();
      expect(await web.getByLabel("Replicas of web").isDisabled()).toBe(true);
      await web.getByText(/Cannot scale: .*port/).waitFor();
      await web.getByText(`127.0.0.1:${port}:8080/tcp`).waitFor();
      await web.getByRole("cell", { name: "running" }).waitFor();

      // the overview lists it with its live status
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Apps", exact: true }).click();
      const card = page.getByRole("listitem", { name: SLUG });
      await card.getByText("status: running").waitFor();
      await card.getByText("version 1").waitFor();
      await card.getByRole("link", { name: SLUG }).click();
      await page.getByRole("heading", { level: 1, name: SLUG }).waitFor();
    },
    STEP_MS,
  );

  test(
    "shows the server's reason for a privileged compose and creates nothing",
    async () => {
      await page.goto(`${url}/new-app?from=compose`);
      const form = page.getByRole("form", { name: "New app" });
      await form.getByLabel("Slug").fill(BAD_SLUG);
      await form.getByLabel("Compose file").fill(compose(await freePort(), "    privileged: true\n"));
      await form.getByRole("button", { name: "Deploy" }).click();
      const refusal = form.getByRole("alert").filter({ hasText: 'Bad Request: service "web": privileged is not allowed' });
      await refusal.waitFor();
      await refusal.getByText("Nothing was written or started.").waitFor();
      expect((await pageFetch(page, `/api/apps/${BAD_SLUG}`)).status).toBe(404);
      expect(await containersOf(BAD_SLUG)).toEqual([]);
      // the refusal was about what was sent: editing the file takes it away
      await form.getByLabel("Compose file").press("End");
      await form.getByLabel("Compose file").pressSequentially("\n");
      await refusal.waitFor({ state: "detached" });
    },
    STEP_MS,
  );

  test(
    "changes an env value: the app redeploys and a new version appears",
    async () => {
      await page.goto(`${url}/apps/${SLUG}?tab=env`);
      const form = page.getByRole("form", { name: "Environment" });
      const value = form.getByLabel("Value of GREETING", { exact: true });
      await until(async () => (await value.inputValue()) === "hello-1", { what: "the env to load" });
      await value.fill("hello-2");
      await form.getByRole("button", { name: "Save and redeploy" }).click();
      await outcome("Deploy (env change)").getByText("Deploy (env change) succeeded").waitFor({ timeout: DEPLOY_MS });
      await waitStatus("running");

      await appTab("Versions").click();
      const v2 = page.getByRole("row", { name: "Version 2" });
      await v2.getByText("current").waitFor();
      expect(await page.getByRole("table", { name: "Versions" }).getByRole("row").count()).toBe(3);
      expect((await pageFetch(page, `/api/apps/${SLUG}/env`)).body).toEqual({ GREETING: "hello-2" });
    },
    STEP_MS,
  );

  test(
    "the Deploy tab lists the deploys with how each service was replaced, and why",
    async () => {
      await appTab("Deploy").click();
      const table = page.getByRole("table", { name: "Recent deploys" });
      const replaced = table.getByRole("list", { name: "How each service was replaced" }).first();
      await replaced.waitFor();
      // the app has no endpoints: compose recreates it, and the reason is there on hover and for screen readers
      expect((await replaced.textContent())?.replace(/\s+/g, " ")).toContain("web: recreate (no endpoints");
      expect(await replaced.getByRole("listitem").first().getAttribute("title")).toContain("no endpoints");
      if (process.env.SUNDECK_SHOTS) await page.screenshot({ path: `${process.env.SUNDECK_SHOTS}/deploy-tab.png` });
    },
    STEP_MS,
  );

  test(
    "stops and starts the app; the status follows",
    async () => {
      await appTab("Services").click();
      await actions().getByRole("button", { name: "Stop", exact: true }).click();
      await outcome("Stop").getByText("Stop succeeded").waitFor({ timeout: DEPLOY_MS });
      await waitStatus("stopped");
      expect(await hit(port)).toBe(0);
      expect(await actions().getByRole("button", { name: "Stop", exact: true }).isDisabled()).toBe(true);

      await actions().getByRole("button", { name: "Start", exact: true }).click();
      await outcome("Start").getByText("Start succeeded").waitFor({ timeout: DEPLOY_MS });
      await waitStatus("running");
      expect(await until(async () => (await hit(port)) === 200, { timeout: 30_000, what: "the app to answer again" })).toBe(true);
    },
    STEP_MS,
  );

  test(
    "shows live container logs with stderr marked, and filters them",
    async () => {
      await appTab("Logs").click();
      expect(await unlabeledControls(page)).toEqual([]);
      const view = page.getByRole("log", { name: "Log lines of web" });
      const line = view.locator(".log-line", { hasText: "greeting hello-2" }).first();
      await line.waitFor({ timeout: 30_000 });
      expect(await line.getAttribute("class")).toContain("stream-stderr");
      await page.getByRole("status").filter({ hasText: "Live" }).waitFor();

      await page.getByLabel("Filter").fill("no-such-text");
      await view.getByText("No line matches the filter.").waitFor();
      await page.getByLabel("Filter").fill("greeting");
      await line.waitFor();
    },
    STEP_MS,
  );

  test(
    "compares two versions and rolls back to version 1 from the Versions tab",
    async () => {
      await appTab("Versions").click();
      await page.getByRole("checkbox", { name: "Select version 1 to compare" }).check();
      await page.getByRole("checkbox", { name: "Select version 2 to compare" }).check();
      await page.getByRole("button", { name: "Compare selected" }).click();
      const diff = page.getByRole("region", { name: "Version diff" });
      await diff.getByRole("heading", { name: "Version 1 → version 2" }).waitFor();
      await diff.getByText("changed GREETING").waitFor();
      await diff.getByText("The compose files are identical.").waitFor();
      await diff.getByRole("button", { name: "Close the diff" }).click();

      await page.getByRole("button", { name: "Roll back to version 1" }).click();
      const dialog = page.getByRole("dialog", { name: "Roll back to version 1?" });
      await dialog.getByRole("button", { name: "Roll back" }).click();
      await outcome("Rollback to version 1").getByText("Rollback to version 1 succeeded").waitFor({ timeout: DEPLOY_MS });
      await page.getByRole("row", { name: "Version 1", exact: true }).getByText("current").waitFor();
      await waitStatus("running");
      const view = (await pageFetch(page, `/api/apps/${SLUG}`)).body;
      expect(view.current_version.version).toBe(1);
      expect((await pageFetch(page, `/api/apps/${SLUG}/env`)).body).toEqual({ GREETING: "hello-1" });
      expect(await until(async () => (await hit(port)) === 200, { timeout: 30_000, what: "the app after the rollback" })).toBe(
        true,
      );

      // the app's activity tells the story
      await appTab("Activity").click();
      const feed = page.getByRole("list", { name: `Activity of ${SLUG}` });
      await feed.getByText(`admin stopped ${SLUG}`).waitFor();
      // the first deploy, the second, and the explicit rollback to version 1
      await feed.getByText(`${SLUG} version 1 deployed`).waitFor();
      await feed.getByText(`${SLUG} version 2 deployed`).waitFor();
      await feed.getByText(`${SLUG} rolled back to version 1`).waitFor();
    },
    STEP_MS,
  );

  test(
    "a compose edit whose container exits fails, says why, and is rolled back",
    async () => {
      await appTab("Compose").click();
      const editor = page.getByLabel(`Compose file of ${SLUG}`);
      await until(async () => (await editor.inputValue()).includes("exec /entry.sh"), { what: "the compose file to load" });
      await editor.fill((await editor.inputValue()).replace("exec /entry.sh", "exit 3"));
      await page.getByRole("button", { name: "Save and deploy" }).click();
      const result = outcome("Deploy");
      await result.getByText("Deploy failed", { exact: true }).waitFor({ timeout: DEPLOY_MS });
      await result.getByText(/exited with code 3/).waitFor();
      await result.getByText("Rolled back to the last good version (version 1)").waitFor();
      await page.getByRole("log", { name: "Deploy output lines" }).getByText("rolling back to version 1").waitFor();
      await waitStatus("running");
      expect(await until(async () => (await hit(port)) === 200, { timeout: 30_000, what: "the good version to answer" })).toBe(
        true,
      );
      const versions = (await pageFetch(page, `/api/apps/${SLUG}/versions`)).body as any[];
      expect(versions.map((v) => [v.version, v.status, v.current])).toEqual([
        [3, "failed", false],
        [2, "good", false],
        [1, "good", true],
      ]);
    },
    STEP_MS,
  );

  test(
    "a viewer sees the app read only: no actions, env names without values",
    async () => {
      expect(await pageCall(page, "POST", "/api/users", { username: "vera", password: "vera-password-1", role: "viewer" })).toBe(
        201,
      );
      const users = (await pageFetch(page, "/api/users")).body as any[];
      const vera = users.find((u) => u.username === "vera");
      expect(await pageCall(page, "POST", `/api/users/${vera.id}/access`, { app_slug: SLUG })).toBe(204);

      const other = await browser!.newContext({ locale: "en-US" });
      try {
        const p = await other.newPage();
        watchPage(p, pageProblems);
        await p.goto(`${url}/apps`);
        const login = p.getByRole("form", { name: "Log in" });
        await login.getByLabel("Username").fill("vera");
        await login.getByLabel("Password").fill("vera-password-1");
        await login.getByRole("button", { name: "Log in" }).click();
        await p.getByRole("heading", { level: 1, name: "Apps" }).waitFor();
        await p.getByRole("listitem", { name: SLUG }).getByText("status: running").waitFor();
        expect(await p.getByRole("link", { name: "New app" }).count()).toBe(0);

        await p.getByRole("link", { name: SLUG }).click();
        await p.getByRole("heading", { level: 1, name: SLUG }).waitFor();
        await p.getByText("read only").waitFor();
        expect(await p.getByRole("group", { name: "App actions" }).count()).toBe(0);
        expect(await p.getByRole("button", { name: "Scale" }).count()).toBe(0);

        await p.getByRole("navigation", { name: "App sections" }).getByRole("link", { name: "Env", exact: true }).click();
        await p.getByRole("region", { name: "Variables" }).getByText("GREETING").waitFor();
        await p.getByText("value hidden").waitFor();
        expect(await p.getByRole("button", { name: "Save and redeploy" }).count()).toBe(0);
        expect(await p.content()).not.toContain("hello-1");

        await p.getByRole("navigation", { name: "App sections" }).getByRole("link", { name: "Versions", exact: true }).click();
        await p.getByRole("row", { name: "Version 2" }).waitFor();
        expect(await p.getByRole("button", { name: /Roll back/ }).count()).toBe(0);

        await p.getByRole("navigation", { name: "App sections" }).getByRole("link", { name: "Compose", exact: true }).click();
        const editor = p.getByLabel(`Compose file of ${SLUG}`);
        await editor.waitFor();
        expect(await editor.getAttribute("readonly")).not.toBeNull();
        expect(await p.getByRole("button", { name: "Save and deploy" }).count()).toBe(0);
      } finally {
        await other.close();
      }
    },
    STEP_MS,
  );

  test(
    "the app pages fit a phone and work in the dark theme",
    async () => {
      await page.setViewportSize({ width: 375, height: 740 });
      try {
        await page.getByRole("button", { name: "Dark theme" }).click();
        for (const tab of ["Services", "Deploy", "Versions", "Compose", "Env", "Logs", "Activity"]) {
          await appTab(tab).click();
          await until(async () => new URL(page.url()).search.includes(tab === "Services" ? "" : tab.toLowerCase()), {
            what: `the ${tab} tab`,
          });
          const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
          expect({ tab, scroll }).toEqual({ tab, scroll: inner });
        }
        expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe("dark");
      } finally {
        await page.getByRole("button", { name: "Dark theme" }).click();
        await page.setViewportSize({ width: 1280, height: 900 });
      }
    },
    STEP_MS,
  );

  test(
    "removes the app with its volumes after a confirmation",
    async () => {
      expect(await volumesOf(SLUG)).toHaveLength(1);
      await appTab("Services").click();
      await actions().getByRole("button", { name: "Remove", exact: true }).click();
      const dialog = page.getByRole("dialog", { name: `Remove ${SLUG}?` });
      await dialog.getByLabel("Also remove volumes").check();
      await dialog.getByRole("button", { name: "Remove app" }).click();
      await page.getByRole("heading", { level: 1, name: "Apps" }).waitFor({ timeout: DEPLOY_MS });
      await page.getByRole("heading", { name: "No apps yet" }).waitFor();
      expect((await pageFetch(page, `/api/apps/${SLUG}`)).status).toBe(404);
      expect(await containersOf(SLUG)).toEqual([]);
      expect(await volumesOf(SLUG)).toEqual([]);
      expect(await hit(port)).toBe(0);
    },
    STEP_MS,
  );

  test("raised no page errors or CSP violations", () => {
    expect(pageProblems).toEqual([]);
  });
});
