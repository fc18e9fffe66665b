/**
 * Metrics, alerts and webhooks in the dashboard, in a real Chromium against the compiled binary and a real Docker
 * engine: an app's Metrics tab draws uPlot canvases from the samples the server collected, refreshes itself while
 * open and answers every range button (1y included); the overview draws the host's; an example alert rule is one
 * click and lands in the table, a silence shows on its row, a rule that holds shows under Firing now and in the
 * history (filtered by state); a webhook destination to a real local receiver is created and its Test button shows
 * the receiver's answer (a signed generic payload, then a failing receiver's status), which the delivery log lists;
 * a viewer gets none of the write actions.
 * Needs `bun run build` first and a running dockerd.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
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
import { ensureTestImages, removeProject, requireDocker } from "../helpers/docker";
import { until } from "../helpers/http";
import { tempDir } from "../helpers/tmp";

const STEP_MS = 120_000;
const DEPLOY_MS = 90_000;
/** A few collector ticks (every 10 s). */
const SAMPLES_MS = 45_000;

const RUN = Date.now().toString(36);
const SLUG = `uimetrics-${RUN}`;
const SECRET = "receiver-shared-secret";

const COMPOSE = `services:
  web:
    image: sundeck-test/web:latest
    stop_grace_period: 1s
    mem_limit: 64m
`;

/** A real receiver on loopback (the server runs with webhooks.allow_private_destinations on). */
interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}
const received: Received[] = [];
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const path = new URL(req.url).pathname;
    received.push({ path, headers: Object.fromEntries(req.headers), body: await req.text() });
    return new Response(path === "/fail" ? "nope" : "ok", { status: path === "/fail" ? 500 : 200 });
  },
});

let server: RunningBinary | undefined;
let url: string;
let browser: Browser | undefined;
let page: Page;
const pageProblems: string[] = [];

const appTab = (name: string) => page.getByRole("navigation", { name: "App sections" }).getByRole("link", { name, exact: true });
const nav = (p: Page, name: string) => p.getByRole("navigation", { name: "Main" }).getByRole("link", { name, exact: true });

beforeAll(async () => {
  await requireDocker();
  await ensureTestImages();
  server = await startBinary([], {
    cwd: tempDir("sundeck-dashboard-metrics-e2e-"),
    env: {
      SUNDECK_MANAGEMENT_PORT: "0",
      SUNDECK_LISTEN_ADDR: "127.0.0.1:0",
      SUNDECK_HTTP_LISTEN_ADDR: "127.0.0.1:0",
      SUNDECK_TLS_MODE: "off",
      SUNDECK_WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS: "true",
      SUNDECK_RATELIMIT_BURST: "5000",
      SUNDECK_RATELIMIT_REQUESTS: "50000",
    },
  });
  url = server.url;
  ({ browser, page } = await openDashboard(pageProblems, 900));
  await firstRunSetup(page, url);
  await deployFromPage(page, SLUG, COMPOSE, DEPLOY_MS);
}, STEP_MS);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await server?.stop();
  receiver.stop(true);
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
}, STEP_MS);

describe("dashboard metrics, alerts and webhooks", () => {
  test(
    "the Metrics tab draws the app's samples with uPlot, per container, and switches range",
    async () => {
      // the collector's real samples (every 10 s), not rows put in by the test
      await until(
        async () => {
          const m = (await pageFetch(page, `/api/apps/${SLUG}/metrics?range=1h`)).body;
          return m?.containers?.[0]?.points?.some((p: any) => p.mem_bytes !== null);
        },
        { timeout: SAMPLES_MS, every: 500, what: "a memory sample of the app" },
      );
      await page.goto(`${url}/apps/${SLUG}`);
      await page.getByRole("heading", { level: 1, name: SLUG }).waitFor();
      await appTab("Metrics").click();
      for (const name of ["CPU (% of one core)", "Memory (used and limit)", "Network", "Disk I/O"]) {
        await page.getByRole("heading", { level: 2, name }).waitFor();
      }
      const memory = page.getByRole("figure", { name: /^Memory per container: web[-_]1 now \d/ });
      await memory.locator("canvas").waitFor();
      const box = await memory.locator("canvas").boundingBox();
      expect(box!.width).toBeGreaterThan(200);
      // the limit from the compose file is its own dashed line in the legend
      await memory.getByText("web_1 limit").or(memory.getByText("web-1 limit")).waitFor();
      await page.getByText("10 s samples").waitFor();
      expect(await page.locator(".mchart canvas").count()).toBe(4);
      // live while open: the tab reads the range again at the collector's pace, and the newest bucket moves on
      const updated = page.getByText("10 s samples").locator("time");
      const first = await updated.getAttribute("datetime");
      await until(async () => (await updated.getAttribute("datetime")) !== first, {
        timeout: SAMPLES_MS,
        every: 500,
        what: "the Metrics tab to refresh itself",
      });

      await page.getByRole("button", { name: "24h", exact: true }).click();
      await page.waitForURL(/range=24h/);
      await page.getByText("1 min samples").waitFor();
      expect(await page.getByRole("button", { name: "24h", exact: true }).getAttribute("aria-pressed")).toBe("true");
      await page
        .getByRole("figure", { name: /^Memory per container/ })
        .locator("canvas")
        .waitFor();

      // the longest range too: a year of hourly buckets, ending with the samples of this hour
      await page.getByRole("button", { name: "1y", exact: true }).click();
      await page.waitForURL(/range=1y/);
      await page.getByText("1 h samples").waitFor();
      await page
        .getByRole("figure", { name: /^Memory per container/ })
        .locator("canvas")
        .waitFor();
      expect(await page.locator(".mchart canvas").count()).toBe(4);
    },
    STEP_MS,
  );

  test(
    "the overview draws the host's last hour",
    async () => {
      await nav(page, "Overview").click();
      const host = page.getByRole("region", { name: "Host, last hour" });
      await host
        .getByRole("figure", { name: /^Host memory: used now \d/ })
        .locator("canvas")
        .waitFor({ timeout: SAMPLES_MS });
      expect(await host.locator("canvas").count()).toBe(4);
      await host.getByText(/Data disk: [\d.]+ \w+ free of/).waitFor();
    },
    STEP_MS,
  );

  test(
    "an example rule is one click, then shows in the table; a silence shows on its row; a firing rule shows under Firing now and in the history",
    async () => {
      await nav(page, "Alerts").click();
      await page.getByRole("heading", { level: 1, name: "Alerts" }).waitFor();
      await page.getByRole("region", { name: "Add an example rule" }).getByLabel("For").selectOption(SLUG);
      await page.getByRole("button", { name: "Memory above 85% of limit for 5 min" }).click();
      const row = page.getByRole("row", { name: `Memory above 85% of limit (${SLUG})` });
      await row.getByText("Memory above 85% for 5m").waitFor();
      await row.getByRole("cell", { name: SLUG, exact: true }).waitFor();
      const rules = (await pageFetch(page, "/api/alerts/rules")).body as any[];
      expect(rules).toContainEqual(
        expect.objectContaining({ kind: "memory", threshold: 85, duration: "5m", app_slug: SLUG, enabled: true }),
      );

      await row.getByRole("button", { name: /^Silence/ }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Until lifted" }).click();
      await row.getByText("silenced until lifted").waitFor();

      // a rule that holds at the next tick shows under Firing now and in the history, which filters by state
      const always = { name: "memory in use", app_slug: SLUG, kind: "memory", threshold: 0, duration: "0s" };
      const created = await pageFetch(page, "/api/alerts/rules", { method: "POST", body: always });
      expect(created.status).toBe(201);
      const firing = page.getByRole("list", { name: "Firing now" }).getByRole("listitem").filter({ hasText: "memory in use" });
      await firing.getByText(`${SLUG}/web-1`).waitFor({ timeout: SAMPLES_MS });
      const history = page.getByRole("list", { name: "Alert history" });
      await history.getByText(`memory of ${SLUG}/web-1 at`).first().waitFor({ timeout: SAMPLES_MS });
      await page.getByRole("form", { name: "Filter alert history" }).getByLabel("State").selectOption("resolved");
      await page.getByText("Nothing has fired that matches.").waitFor();
      await page.getByRole("form", { name: "Filter alert history" }).getByLabel("State").selectOption("firing");
      await history.getByText(`memory of ${SLUG}/web-1 at`).first().waitFor();
      expect(await pageCall(page, "DELETE", `/api/alerts/rules/${created.body.id}`)).toBe(204);

      // the server's 400 is shown in the form as it says it
      await page.getByRole("button", { name: "New rule" }).click();
      const form = page.getByRole("form", { name: "New alert rule" });
      await form.getByLabel("Name").fill("never");
      await form.getByLabel("For").fill("forever");
      expect(await unlabeledControls(page)).toEqual([]);
      await form.getByRole("button", { name: "Create rule" }).click();
      expect(await form.getByRole("alert").textContent()).toContain("duration");
      await form.getByRole("button", { name: "Cancel" }).click();
    },
    STEP_MS,
  );

  test(
    "a webhook destination's Test button shows the receiver's answer, and the delivery log lists it",
    async () => {
      await nav(page, "Webhooks").click();
      await page.getByRole("heading", { level: 1, name: "Webhooks" }).waitFor();
      await page.getByRole("button", { name: "New webhook" }).click();
      const form = page.getByRole("form", { name: "New webhook" });
      await form.getByLabel("Name").fill("receiver");
      await form.getByLabel("URL").fill(`http://127.0.0.1:${receiver.port}/hook`);
      await form.getByLabel("Secret").fill(SECRET);
      await form.getByRole("button", { name: "Create webhook" }).click();

      const row = page.getByRole("row", { name: "receiver" });
      await row.getByRole("cell", { name: "set", exact: true }).waitFor();
      const before = received.length;
      await row.getByRole("button", { name: "Test receiver" }).click();
      expect(await row.getByRole("status").textContent()).toBe("Test delivered: status 200");
      // the stored secret signed it, though the page never had it back
      const got = received.at(-1)!;
      expect(received.length).toBe(before + 1);
      const ts = got.headers["x-sundeck-timestamp"];
      const mac = createHmac("sha256", SECRET).update(`${ts}.${got.body}`).digest("hex");
      expect(got.headers["x-sundeck-signature-256"]).toBe(`sha256=${mac}`);
      expect(JSON.parse(got.body)).toMatchObject({ event: "test" });

      await row.getByRole("button", { name: "Deliveries of receiver" }).click();
      const log = page.getByRole("table", { name: "Deliveries to receiver" });
      await log.getByRole("cell", { name: "test" }).waitFor();
      await log.getByText("200", { exact: true }).waitFor();

      // an edit keeps the secret when the field is left blank; the test shows a failing receiver's status
      await row.getByRole("button", { name: "Edit receiver" }).click();
      const edit = page.getByRole("form", { name: "Edit webhook" });
      expect(await edit.getByLabel("Secret", { exact: true }).getAttribute("placeholder")).toContain("leave blank to keep");
      await edit.getByLabel("URL").fill(`http://127.0.0.1:${receiver.port}/fail`);
      await edit.getByRole("button", { name: "Save webhook" }).click();
      await row.getByRole("cell", { name: "set", exact: true }).waitFor();
      await row.getByRole("button", { name: "Test receiver" }).click();
      await row.getByRole("status").getByText("Test failed: status 500").waitFor();
      await log.getByText("500", { exact: true }).waitFor();
      expect(pageProblems).toEqual([]);
    },
    STEP_MS,
  );

  test(
    "a viewer reads alerts and webhooks without any write action",
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
        await p.goto(`${url}/alerts`);
        const login = p.getByRole("form", { name: "Log in" });
        await login.getByLabel("Username").fill("vic");
        await login.getByLabel("Password").fill("vic-password-1");
        await login.getByRole("button", { name: "Log in" }).click();
        await p.getByRole("heading", { level: 1, name: "Alerts" }).waitFor();
        await p.getByRole("row", { name: `Memory above 85% of limit (${SLUG})` }).waitFor();
        expect(await p.getByRole("button", { name: "New rule" }).count()).toBe(0);
        expect(await p.getByRole("button", { name: /^(Edit|Delete|Silence)/ }).count()).toBe(0);
        expect(await p.getByRole("region", { name: "Add an example rule" }).count()).toBe(0);

        await nav(p, "Webhooks").click();
        await p.getByRole("row", { name: "receiver" }).waitFor();
        expect(await p.getByRole("button", { name: "New webhook" }).count()).toBe(0);
        expect(await p.getByRole("button", { name: /^(Test|Edit|Delete)/ }).count()).toBe(0);
      } finally {
        await other.close();
      }
      expect(pageProblems).toEqual([]);
    },
    STEP_MS,
  );
});
