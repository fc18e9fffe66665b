/**
 * The Backups tab in a real Chromium against the compiled binary and a real Docker engine: a volume app's service is
 * detected and preselected, a local backup config is made in the dialog (the schedule said in words), Run now stores
 * an archive whose run turns succeeded with its size and digest, the download link serves bytes matching that digest,
 * a restore from the run (behind typing the app's name) brings back the volume's file after it was overwritten, an
 * uploaded hostile archive is refused with the entry named, an edited schedule shows in words with its next run, the
 * tab fits a phone, and a viewer reads the lists without any write action or download.
 * Needs `bun run build` first and a running dockerd.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { type RunningBinary, startBinary } from "../helpers/binary";
import {
  deployFromPage,
  firstRunSetup,
  openDashboard,
  pageCall,
  pageFetch,
  unlabeledControls,
  watchPage,
} from "../helpers/dashboard";
import { dockerOk, ensureTestImages, removeProject, requireDocker } from "../helpers/docker";
import { until } from "../helpers/http";
import { member, tar } from "../helpers/tar-corpus";
import { tempDir } from "../helpers/tmp";

const STEP_MS = 120_000;
const DEPLOY_MS = 90_000;
const RUN_MS = 60_000;

const RUN = Date.now().toString(36);
const SLUG = `uibackup-${RUN}`;
const COMPOSE = `services:
  data:
    image: sundeck-test/busybox:latest
    command: ["sh", "-c", "[ -f /data/greeting ] || echo hello-backup > /data/greeting; trap 'exit 0' TERM; while true; do sleep 1; done"]
    stop_grace_period: 1s
    volumes:
      - store:/data
volumes:
  store: {}
`;

let server: RunningBinary | undefined;
let url: string;
let browser: Browser | undefined;
let page: Page;
const pageProblems: string[] = [];

const appTab = (p: Page, name: string) =>
  p.getByRole("navigation", { name: "App sections" }).getByRole("link", { name, exact: true });

/** The app's one container (compose v1 names it with underscores). */
async function containerName(): Promise<string> {
  const out = await dockerOk("ps", "--filter", `label=com.docker.compose.project=sundeck-${SLUG}`, "--format", "{{.Names}}");
  return out.trim().split("\n")[0];
}

const greeting = async () => (await dockerOk("exec", await containerName(), "cat", "/data/greeting")).trim();

beforeAll(async () => {
  await requireDocker();
  await ensureTestImages();
  server = await startBinary([], {
    cwd: tempDir("sundeck-dashboard-backups-e2e-"),
    env: {
      SUNDECK_MANAGEMENT_PORT: "0",
      SUNDECK_LISTEN_ADDR: "127.0.0.1:0",
      SUNDECK_HTTP_LISTEN_ADDR: "127.0.0.1:0",
      SUNDECK_TLS_MODE: "off",
      SUNDECK_RATELIMIT_BURST: "5000",
      SUNDECK_RATELIMIT_REQUESTS: "50000",
    },
  });
  url = server.url;
  ({ browser, page } = await openDashboard(pageProblems, 1000));
  await firstRunSetup(page, url);
  await deployFromPage(page, SLUG, COMPOSE, DEPLOY_MS);
}, STEP_MS);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await server?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
}, STEP_MS);

describe("dashboard backups", () => {
  let runId = 0;
  let sha = "";

  test(
    "a local volume backup made in the dialog, run now, succeeds with its size and digest",
    async () => {
      await page.goto(`${url}/apps/${SLUG}`);
      await page.getByRole("heading", { level: 1, name: SLUG }).waitFor();
      await appTab(page, "Backups").click();
      await page.waitForURL(/tab=backups/);
      await page.getByRole("heading", { level: 2, name: "Detected" }).waitFor();
      await page
        .getByRole("list", { name: "Detected strategies" })
        .getByRole("listitem")
        .filter({ hasText: /^data: volume/ })
        .waitFor();
      await page.getByText("No backups configured").waitFor();

      await page.getByRole("button", { name: "New backup" }).click();
      const form = page.getByRole("form", { name: "New backup" });
      // the first detected service and its strategy are preselected
      expect(await form.getByLabel("Service").inputValue()).toBe("data");
      expect(await form.getByLabel("Strategy").inputValue()).toBe("volume");
      await form.getByText(/^Detected: /).waitFor();
      expect(await form.getByLabel("Target").inputValue()).toBe("local");
      await form.getByLabel("Schedule (cron)").fill("30 4 * * 0");
      await form.getByText("Every Sunday at 04:30").waitFor();
      await form.getByLabel("Schedule (cron)").fill("");
      await form.getByText("No schedule: runs only when started by hand").waitFor();
      await form.getByLabel("Keep the last").fill("3");
      expect(await unlabeledControls(page)).toEqual([]);
      await form.getByRole("button", { name: "Create backup" }).click();
      await form.waitFor({ state: "detached" });

      const row = page.getByRole("row", { name: "Backup data (volume)" });
      await row.getByText("local disk").waitFor();
      await row.getByText("by hand").waitFor();
      await row.getByText("last 3").waitFor();
      await row.getByRole("button", { name: "Run now data (volume)" }).click();

      const runs = page.getByRole("table", { name: "Backup runs" });
      const first = runs.locator("tbody tr").first();
      await first.waitFor();
      await until(async () => (await first.getAttribute("data-status")) !== "running", {
        timeout: RUN_MS,
        what: "the run to finish",
      });
      const list = (await pageFetch(page, `/api/apps/${SLUG}/backups/runs`)).body as any[];
      const run = list[0];
      expect(run.error).toBeNull();
      expect(run.status).toBe("succeeded");
      runId = run.id;
      sha = run.sha256;
      expect(await first.getAttribute("aria-label")).toBe(`Run ${runId}`);
      await first.getByText(sha.slice(0, 12)).waitFor();
      expect(await first.locator(`code[title="${sha}"]`).count()).toBe(1);
      expect(await first.locator("td[data-label=Size]").textContent()).toMatch(/\d (B|KiB|MiB)$/);
    },
    STEP_MS,
  );

  test(
    "the download link serves the archive whose sha256 the run recorded",
    async () => {
      const link = page.getByRole("link", { name: `Download run ${runId}` });
      expect(await link.getAttribute("href")).toBe(`/api/backups/runs/${runId}/download`);
      const digest = await page.evaluate(async (href) => {
        const r = await fetch(href);
        const bytes = await r.arrayBuffer();
        const d = await crypto.subtle.digest("SHA-256", bytes);
        return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join("");
      }, `/api/backups/runs/${runId}/download`);
      expect(digest).toBe(sha);
    },
    STEP_MS,
  );

  test(
    "restore from the run asks for the app's name, then brings the volume's file back",
    async () => {
      await dockerOk("exec", await containerName(), "sh", "-c", "echo overwritten > /data/greeting");
      expect(await greeting()).toBe("overwritten");
      await page.getByRole("button", { name: `Restore run ${runId}` }).click();
      const dialog = page.getByRole("form", { name: "Confirm restore" });
      const go = dialog.getByRole("button", { name: "Restore" });
      expect(await go.isDisabled()).toBe(true);
      await dialog.getByLabel(`Type ${SLUG} to confirm`).fill("wrong");
      expect(await go.isDisabled()).toBe(true);
      await dialog.getByLabel(`Type ${SLUG} to confirm`).fill(SLUG);
      await go.click();
      await dialog.waitFor({ state: "detached" });

      const restores = page.getByRole("table", { name: "Restores" });
      const first = restores.locator("tbody tr").first();
      await first.waitFor();
      await until(async () => (await first.getAttribute("data-status")) !== "running", {
        timeout: RUN_MS,
        what: "the restore to finish",
      });
      const list = (await pageFetch(page, `/api/apps/${SLUG}/backups/restores`)).body as any[];
      expect(list[0]).toMatchObject({ run_id: runId, status: "succeeded", error: null });
      await first.getByText(`run #${runId}`).waitFor();
      // the container may have been stopped and started around the restore
      await until(async () => (await pageFetch(page, `/api/apps/${SLUG}`)).body?.status === "running", {
        timeout: DEPLOY_MS,
        what: "the app to run again",
      });
      expect(await greeting()).toBe("hello-backup");
    },
    STEP_MS,
  );

  test(
    "an uploaded hostile archive is refused with the entry named",
    async () => {
      const upload = page.getByRole("form", { name: "Restore from a file" });
      await upload.getByLabel("Archive").setInputFiles({
        name: "evil.tar",
        mimeType: "application/x-tar",
        buffer: Buffer.from(tar(member({ name: "../escape" }, "x\n"))),
      });
      await upload.getByLabel("Strategy").selectOption("volume");
      await upload.getByLabel(`Type ${SLUG} to confirm`).fill(SLUG);
      await upload.getByRole("button", { name: "Upload and restore" }).click();
      await upload.getByRole("alert").getByText('archive entry "../escape"').waitFor();
      expect(await greeting()).toBe("hello-backup");
    },
    STEP_MS,
  );

  test(
    "editing the config's schedule shows it in words with the next run",
    async () => {
      const row = page.getByRole("row", { name: "Backup data (volume)" });
      await row.getByRole("button", { name: "Edit data (volume)" }).click();
      const form = page.getByRole("form", { name: "Edit backup" });
      expect(await form.getByLabel("Keep the last").inputValue()).toBe("3");
      await form.getByLabel("Schedule (cron)").fill("0 3 * * *");
      await form.getByLabel("Time zone").fill("Europe/Paris");
      await form.getByRole("button", { name: "Save backup" }).click();
      await form.waitFor({ state: "detached" });
      await row.getByText("Every day at 03:00").waitFor();
      await row.getByText("(Europe/Paris)").waitFor();
      await row.locator("td[data-label='Next run'] time").waitFor();
      const configs = (await pageFetch(page, `/api/apps/${SLUG}/backups/configs`)).body as any[];
      expect(configs[0]).toMatchObject({ schedule: "0 3 * * *", timezone: "Europe/Paris", retention_count: 3, enabled: true });
      expect(Date.parse(configs[0].next_run_at)).toBeGreaterThan(Date.now());
    },
    STEP_MS,
  );

  test(
    "the tab fits a phone, with its tables stacked",
    async () => {
      await page.setViewportSize({ width: 375, height: 740 });
      try {
        await page.getByRole("row", { name: `Run ${runId}` }).waitFor();
        const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
        expect(scroll).toBe(inner);
        await page.getByRole("button", { name: "New backup" }).click();
        const form = page.getByRole("form", { name: "New backup" });
        await form.getByLabel("Target").selectOption("s3");
        await form.getByLabel("Secret key").waitFor();
        const [s2, i2] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
        expect(s2).toBe(i2);
        await form.getByRole("button", { name: "Cancel" }).click();
        await form.waitFor({ state: "detached" });
      } finally {
        await page.setViewportSize({ width: 1280, height: 1000 });
      }
    },
    STEP_MS,
  );

  test(
    "a viewer reads configs, runs and restores without any write action or download",
    async () => {
      expect(await pageCall(page, "POST", "/api/users", { username: "vic", password: "vic-password-1", role: "viewer" })).toBe(
        201,
      );
      const users = (await pageFetch(page, "/api/users")).body as any[];
      const vic = users.find((u) => u.username === "vic");
      expect(await pageCall(page, "POST", `/api/users/${vic.id}/access`, { app_slug: SLUG })).toBe(204);
      const other = await browser!.newContext({ locale: "en-US" });
      try {
        const p = await other.newPage();
        watchPage(p, pageProblems);
        await p.goto(`${url}/apps/${SLUG}?tab=backups`);
        const login = p.getByRole("form", { name: "Log in" });
        await login.getByLabel("Username").fill("vic");
        await login.getByLabel("Password").fill("vic-password-1");
        await login.getByRole("button", { name: "Log in" }).click();
        await p.getByRole("row", { name: "Backup data (volume)" }).waitFor();
        await p.getByRole("row", { name: `Run ${runId}` }).waitFor();
        await p.getByRole("table", { name: "Restores" }).waitFor();
        expect(await p.getByRole("button", { name: /^(New backup|Run now|Edit|Delete|Restore)/ }).count()).toBe(0);
        expect(await p.getByRole("link", { name: /^Download/ }).count()).toBe(0);
        expect(await p.getByRole("form", { name: "Restore from a file" }).count()).toBe(0);
      } finally {
        await other.close();
      }
      expect(pageProblems).toEqual([]);
    },
    STEP_MS,
  );
});
