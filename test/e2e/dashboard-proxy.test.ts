/**
 * The proxy part of the dashboard in a real Chromium against the compiled binary in `local` TLS mode and a real Docker
 * engine: an app with two endpoints (one on the server's local mode, one `custom`), their TLS modes and certificates,
 * a refused and an accepted certificate upload and its removal, traffic sent through the proxy shown in the Traffic
 * tab, and the trust page link. Needs `bun run build` first and a running dockerd.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type RunningBinary, startBinary } from "../helpers/binary";
import { deployFromPage, firstRunSetup, openDashboard, pageFetch, proxyPortOf, unlabeledControls } from "../helpers/dashboard";
import { ensureTestImages, removeProject, requireDocker } from "../helpers/docker";
import { until } from "../helpers/http";
import { fetchTls, opensslCert } from "../helpers/tls";
import { tempDir } from "../helpers/tmp";

/** Per test: the deploy waits for the container to settle. */
const STEP_MS = 120_000;
const DEPLOY_MS = 90_000;
/** Longer than the Traffic tab's 10-second refresh. */
const REFRESH_MS = 25_000;
const DAY_MS = 86_400_000;

const RUN = Date.now().toString(36);
const SLUG = `uiproxy-${RUN}`;

const COMPOSE = `services:
  web:
    image: sundeck-test/web:latest
    stop_grace_period: 1s
    labels:
      sundeck.domain: app.test
      sundeck.port: "8080"
      sundeck.endpoints.2.domain: shop.test
      sundeck.endpoints.2.port: "8080"
      sundeck.endpoints.2.tls: custom
`;

let cwd: string;
let certDir: string;
let server: RunningBinary | undefined;
let url: string;
let browser: Browser | undefined;
let context: BrowserContext;
let page: Page;
let proxyPort: number;
const pageProblems: string[] = [];

const appTab = (name: string) => page.getByRole("navigation", { name: "App sections" }).getByRole("link", { name, exact: true });
const endpoint = (host: string) => page.getByRole("region", { name: `Endpoint ${host}` });
const hostRow = (host: string) =>
  page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: `https://${host}/` }) });

beforeAll(async () => {
  await requireDocker();
  await ensureTestImages();
  cwd = tempDir("sundeck-dashboard-proxy-e2e-");
  certDir = tempDir("sundeck-dashboard-proxy-certs-");
  server = await startBinary([], {
    cwd,
    env: {
      SUNDECK_MANAGEMENT_PORT: "0",
      SUNDECK_LISTEN_ADDR: "127.0.0.1:0",
      SUNDECK_HTTP_LISTEN_ADDR: "127.0.0.1:0",
      SUNDECK_TLS_MODE: "local",
      SUNDECK_RATELIMIT_BURST: "5000",
      SUNDECK_RATELIMIT_REQUESTS: "50000",
    },
  });
  url = server.url;
  ({ browser, context, page } = await openDashboard(pageProblems, 900));
  await firstRunSetup(page, url);
  proxyPort = await proxyPortOf(page);

  await deployFromPage(page, SLUG, COMPOSE, DEPLOY_MS);
}, STEP_MS);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await server?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
}, STEP_MS);

describe("dashboard proxy", () => {
  test(
    "shows both endpoints with their TLS modes and the local certificate's expiry",
    async () => {
      await page.goto(`${url}/apps/${SLUG}`);
      await page.getByRole("heading", { level: 1, name: SLUG }).waitFor();
      await appTab("Endpoints").click();

      const app = endpoint("app.test");
      await app.getByText("web:8080").waitFor();
      expect(await app.getByTestId("tls-mode").textContent()).toContain("local (server default)");
      expect(await app.getByRole("link", { name: "https://app.test/" }).getAttribute("href")).toBe("https://app.test/");

      // the local leaf: issued by the local CA, its expiry with the days left as the API reports them
      const certs = (await pageFetch(page, `/api/apps/${SLUG}/certs`)).body as any[];
      const local = certs.find((c) => c.domain === "app.test");
      expect(local).toMatchObject({ mode: "local", status: "issued", source: "local" });
      const days = Math.round((Date.parse(local.not_after) - Date.now()) / DAY_MS);
      const row = hostRow("app.test");
      await row.getByText("certificate: issued", { exact: true }).waitFor();
      await row.getByText("local CA", { exact: true }).waitFor();
      await row.getByText(`(${days} days left)`).waitFor();

      const shop = endpoint("shop.test");
      expect(await shop.getByTestId("tls-mode").textContent()).toContain("custom");
      expect(await shop.getByTestId("tls-mode").textContent()).not.toContain("server default");
      const shopRow = hostRow("shop.test");
      await shopRow.getByText("certificate: pending", { exact: true }).waitFor();
      await shopRow.getByText("local CA (fallback)").waitFor();
      await shopRow.getByText("no certificate uploaded").waitFor();
      // only the custom host has an upload form, and it offers no removal yet
      expect(await app.getByRole("form").count()).toBe(0);
      await shop.getByRole("form", { name: "Certificate for shop.test" }).waitFor();
      expect(await shop.getByRole("button", { name: "Remove certificate…" }).count()).toBe(0);
      expect(await unlabeledControls(page)).toEqual([]);
    },
    STEP_MS,
  );

  test(
    "refuses a key that does not match with the server's reason, stores a valid certificate, then removes it",
    async () => {
      const form = page.getByRole("form", { name: "Certificate for shop.test" });
      const good = opensslCert(certDir, { sans: ["shop.test"], days: 30 });
      const other = opensslCert(certDir, { sans: ["shop.test"] });

      await form.getByLabel("Certificate (PEM)").fill(good.cert);
      await form.getByLabel("Private key (PEM)").fill(other.key);
      await form.getByRole("button", { name: "Upload certificate" }).click();
      await form.getByRole("alert").filter({ hasText: "the key does not match the certificate" }).waitFor();
      expect((await pageFetch(page, `/api/apps/${SLUG}/certs`)).body.find((c: any) => c.domain === "shop.test").source).toBe(
        "fallback",
      );

      await form.getByLabel("Private key (PEM)").fill(good.key);
      await form.getByRole("button", { name: "Upload certificate" }).click();
      const stored = form.getByRole("status").filter({ hasText: "Certificate stored for shop.test" });
      await stored.waitFor();
      const x = new X509Certificate(good.cert);
      await stored.getByText(x.fingerprint256, { exact: true }).waitFor();
      await stored.getByText("(30 days left)").waitFor();
      expect(await form.getByRole("alert").count()).toBe(0);
      // the fields are cleared (the key is not kept in the page)
      expect(await form.getByLabel("Private key (PEM)").inputValue()).toBe("");

      const row = hostRow("shop.test");
      await row.getByText("uploaded", { exact: true }).waitFor();
      await row.getByText("certificate: issued", { exact: true }).waitFor();
      await row.getByText("(30 days left)").waitFor();
      await page.getByRole("heading", { name: "Replace the certificate for shop.test" }).waitFor();
      // the row's details come from the certificate list, so they are there after a reload too
      await row.getByText("Details", { exact: true }).click();
      await row.getByText(x.fingerprint256, { exact: true }).waitFor();

      await form.getByRole("button", { name: "Remove certificate…" }).click();
      const dialog = page.getByRole("dialog", { name: "Remove the certificate for shop.test?" });
      await dialog.getByRole("button", { name: "Remove certificate" }).click();
      await dialog.waitFor({ state: "hidden" });
      await row.getByText("local CA (fallback)").waitFor();
      await row.getByText("certificate: pending", { exact: true }).waitFor();
      expect(await form.getByRole("button", { name: "Remove certificate…" }).count()).toBe(0);
    },
    STEP_MS,
  );

  test(
    "shows the empty state while the app has had no traffic",
    async () => {
      await appTab("Traffic").click();
      await page.getByRole("heading", { name: "No traffic in the last hour" }).waitFor();
      await page.getByText("Requests through the proxy to this app's hosts appear here").waitFor();
      expect(await page.getByRole("table", { name: "Top paths" }).count()).toBe(0);
      expect(await page.getByRole("button", { name: "1h" }).getAttribute("aria-pressed")).toBe("true");
    },
    STEP_MS,
  );

  test(
    "shows traffic sent through the proxy: requests, charts, status classes and the top path",
    async () => {
      const ca = await (await fetch(`${url}/trust/ca.crt`)).text();
      expect(ca).toContain("BEGIN CERTIFICATE");
      // the route is in place once the proxy answers 200 with the container's hostname
      await until(
        async () => {
          const r = await fetchTls(proxyPort, "app.test", "/", ca).catch(() => null);
          return r?.status === 200 && (await r.text()).trim().length > 0;
        },
        { timeout: 30_000, what: "the proxy to route app.test" },
      );
      for (let i = 0; i < 20; i++) {
        const r = await fetchTls(proxyPort, "app.test", "/", ca);
        expect(r.status).toBe(200);
        await r.text();
      }
      for (let i = 0; i < 3; i++) await (await fetchTls(proxyPort, "app.test", "/nothing-here", ca)).text();

      const stats = (await pageFetch(page, `/api/apps/${SLUG}/request-stats?range=1h`)).body;
      expect(stats.requests).toBeGreaterThanOrEqual(24);
      expect(stats.top_paths[0].path).toBe("/");

      // the tab is still open from the empty state: its 10-second refresh brings the numbers in, no reload
      expect(new URL(page.url()).searchParams.get("tab")).toBe("traffic");
      const summary = page.getByRole("definition").locator("xpath=..");
      const requests = summary.filter({ has: page.getByRole("term").getByText("Requests", { exact: true }) });
      await requests.getByRole("definition").getByText(String(stats.requests), { exact: true }).waitFor({ timeout: REFRESH_MS });
      await summary
        .filter({ has: page.getByText("p95", { exact: true }) })
        .getByText(/ ms$/)
        .waitFor();
      await page.getByRole("img", { name: /^Requests per second over the last hour/ }).waitFor();
      await page.getByRole("img", { name: /^Latency over the last hour: p50 / }).waitFor();

      const paths = page.getByRole("table", { name: "Top paths" });
      const top = paths.getByRole("row").nth(1);
      await top.getByRole("rowheader", { name: "/", exact: true }).waitFor();
      await top.getByText(String(stats.top_paths[0].count), { exact: true }).waitFor();
      await paths.getByRole("rowheader", { name: "/nothing-here" }).waitFor();
      const classes = page.getByRole("list", { name: "Status classes" });
      await classes.getByRole("listitem").filter({ hasText: "2xx" }).getByText(String(stats.status_classes["2xx"])).waitFor();

      // hovering the chart reads the values out in its legend
      const chart = page.getByRole("img", { name: /^Requests per second/ });
      const box = (await chart.boundingBox())!;
      await page.mouse.move(box.x + box.width - 14, box.y + box.height / 2);
      await page.locator(".chart-legend").first().getByText("req/s").locator("strong").waitFor();

      // another range keeps the numbers (they are all in the last hour) and lands in the URL
      await page.getByRole("group", { name: "Range" }).getByRole("button", { name: "24h" }).click();
      await until(() => new URL(page.url()).searchParams.get("range") === "24h", { what: "the range in the URL" });
      expect(await page.getByRole("button", { name: "24h" }).getAttribute("aria-pressed")).toBe("true");
      await page.getByRole("img", { name: /^Requests per second over the last 24 hours/ }).waitFor();
      await requests.getByRole("definition").getByText(String(stats.requests), { exact: true }).waitFor({ timeout: REFRESH_MS });

      // the page fits a phone in the dark theme
      await page.setViewportSize({ width: 375, height: 740 });
      try {
        await page.getByRole("button", { name: "Dark theme" }).click();
        for (const tab of ["Traffic", "Endpoints"]) {
          await appTab(tab).click();
          await until(async () => new URL(page.url()).search.includes(tab.toLowerCase()), { what: `the ${tab} tab` });
          const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
          expect({ tab, scroll }).toEqual({ tab, scroll: inner });
        }
      } finally {
        await page.getByRole("button", { name: "Dark theme" }).click();
        await page.setViewportSize({ width: 1280, height: 900 });
      }
    },
    STEP_MS,
  );

  test(
    "a viewer reads the endpoints and traffic but gets no upload form",
    async () => {
      const created = await pageFetch(page, "/api/users", {
        method: "POST",
        body: { username: "vera", password: "vera-password-1", role: "viewer" },
      });
      expect(created.status).toBe(201);
      const grant = await pageFetch(page, `/api/users/${created.body.id}/access`, { method: "POST", body: { app_slug: SLUG } });
      expect(grant.status).toBe(204);

      const other = await browser!.newContext({ locale: "en-US" });
      try {
        const p = await other.newPage();
        p.on("pageerror", (e) => pageProblems.push(`viewer page error: ${e.message}`));
        await p.goto(`${url}/apps/${SLUG}?tab=endpoints`);
        const login = p.getByRole("form", { name: "Log in" });
        await login.getByLabel("Username").fill("vera");
        await login.getByLabel("Password").fill("vera-password-1");
        await login.getByRole("button", { name: "Log in" }).click();
        const shop = p.getByRole("region", { name: "Endpoint shop.test" });
        await shop.getByText("Certificates of these hosts are uploaded by the app's managers.").waitFor();
        expect(await p.getByRole("form", { name: "Certificate for shop.test" }).count()).toBe(0);
        await p.getByRole("row").filter({ hasText: "https://app.test/" }).getByText("certificate: issued").waitFor();
        const put = await pageFetch(p, `/api/apps/${SLUG}/certs/shop.test`, { method: "PUT", body: { cert: "x", key: "y" } });
        expect(put.status).toBe(403);

        await p.getByRole("navigation", { name: "App sections" }).getByRole("link", { name: "Traffic", exact: true }).click();
        await p.getByRole("table", { name: "Top paths" }).getByRole("rowheader", { name: "/", exact: true }).waitFor();
      } finally {
        await other.close();
      }
    },
    STEP_MS,
  );

  test(
    "links to the trust page from the app and from the settings",
    async () => {
      await page.goto(`${url}/apps/${SLUG}?tab=endpoints`);
      const link = page.getByRole("link", { name: "trust page (opens in a new tab)" });
      expect(await link.getAttribute("target")).toBe("_blank");
      const [trust] = await Promise.all([context.waitForEvent("page"), link.click()]);
      await trust.waitForLoadState();
      expect(new URL(trust.url()).pathname).toBe("/trust");
      await trust.getByRole("heading", { level: 1, name: "Trust the Sundeck local CA" }).waitFor();
      await trust.close();

      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings" }).click();
      const tls = page.getByRole("region", { name: "TLS" });
      await tls.getByRole("definition").first().waitFor();
      expect(await tls.getByRole("definition").first().textContent()).toMatch(/^local · /);
      await tls.getByRole("link", { name: "trust page (opens in a new tab)" }).waitFor();

      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Overview" }).click();
      await page.getByRole("link", { name: "Trust the local CA (opens in a new tab)" }).waitFor();
      expect(pageProblems).toEqual([]);
    },
    STEP_MS,
  );
});
