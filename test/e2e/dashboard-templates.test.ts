/**
 * Templates in a real Chromium against the compiled binary (TLS `local`) and a real Docker engine: the gallery
 * (search, categories, icons, nothing from other origins), the wizard from the gallery through the quick test (saving
 * public_host on the way) to a deploy whose quick-test name answers through the proxy, secrets shown, revealed and
 * regenerated before anything is deployed, and the note about a newer catalog version with its diff.
 * The catalog's images cannot be pulled here: the static site's nginx image is the suite's look-alike
 * (scripts/test-template-images.ts), tagged for the run and untagged after. Needs `bun run build` and a running dockerd.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { useCatalogImages } from "../../scripts/test-template-images";
import { type RunningBinary, startBinary } from "../helpers/binary";
import { firstRunSetup, openDashboard, pageFetch, proxyPortOf, unlabeledControls } from "../helpers/dashboard";
import { ensureTestImages, removeProject, requireDocker } from "../helpers/docker";
import { until } from "../helpers/http";
import { fetchTls } from "../helpers/tls";
import { tempDir } from "../helpers/tmp";

const STEP_MS = 150_000;
const DEPLOY_MS = 120_000;
const SHOTS = "/tmp/shots";

const RUN = Date.now().toString(36);
const SLUG = `uitpl-${RUN}`;
const HOST = `${SLUG}.127.0.0.1.sslip.io`;

let cwd: string;
let server: RunningBinary | undefined;
let url: string;
let browser: Browser | undefined;
let page: Page;
let proxyPort: number;
let images: { release(): Promise<void> } | undefined;
const pageProblems: string[] = [];

const gallery = () => page.getByRole("list", { name: "Template list" });
const card = (name: string) =>
  gallery()
    .getByRole("listitem")
    .filter({ has: page.getByRole("link", { name: `Deploy ${name}` }) });
const shot = (name: string) => page.screenshot({ path: join(SHOTS, name), fullPage: true });

beforeAll(async () => {
  await requireDocker();
  await ensureTestImages();
  images = await useCatalogImages(["static-site"]);
  mkdirSync(SHOTS, { recursive: true });
  cwd = tempDir("sundeck-dashboard-templates-e2e-");
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
  ({ browser, page } = await openDashboard(pageProblems, 900));
  await firstRunSetup(page, url);
  proxyPort = await proxyPortOf(page);
}, STEP_MS);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await server?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  await images?.release();
}, STEP_MS);

describe("dashboard templates", () => {
  test(
    "the New app page opens on the gallery: every template with its icon, search and categories",
    async () => {
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Apps", exact: true }).click();
      await page.getByRole("link", { name: "New app" }).first().click();
      await page.getByRole("heading", { level: 1, name: "New app" }).waitFor();
      await gallery().waitFor();
      const catalog = (await pageFetch(page, "/api/templates")).body as Array<{ id: string; name: string }>;
      await until(async () => (await gallery().getByRole("listitem").count()) === catalog.length, {
        what: "a card per template",
      });
      expect(catalog.length).toBeGreaterThanOrEqual(40);
      // the icons are inline data (the CSP allows no other origin) and they load
      const broken = await gallery().evaluate(
        (ul) =>
          [...ul.querySelectorAll("img")].filter((i) => !i.src.startsWith("data:image/svg+xml") || i.naturalWidth === 0).length,
      );
      expect(broken).toBe(0);
      await shot("templates-gallery.png");

      const search = page.getByLabel("Search templates");
      await search.fill("git forge");
      await card("Gitea").waitFor();
      await until(async () => (await gallery().getByRole("listitem").count()) === 1, { what: "only Gitea" });
      await search.fill("");
      const cats = page.getByRole("list", { name: "Categories" });
      await cats.getByRole("button", { name: /^databases/ }).click();
      await card("PostgreSQL").waitFor();
      expect(await card("Gitea").count()).toBe(0);
      expect(await cats.getByRole("button", { name: /^databases/ }).getAttribute("aria-pressed")).toBe("true");
      await cats.getByRole("button", { name: /^All/ }).click();
      await card("Gitea").waitFor();
      expect(await unlabeledControls(page)).toEqual([]);
      // dark, and a phone's width (looked at by hand: /tmp/shots)
      await page.emulateMedia({ colorScheme: "dark" });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: join(SHOTS, "templates-gallery-phone-dark.png") });
      await page.emulateMedia({ colorScheme: "light" });
      await page.setViewportSize({ width: 1280, height: 900 });
    },
    STEP_MS,
  );

  test(
    "a secret is generated on the server, shown masked with a reveal toggle, and regenerated before the deploy",
    async () => {
      await page.getByLabel("Search templates").fill("postgres");
      await card("PostgreSQL").getByRole("link", { name: "Deploy PostgreSQL" }).click();
      const form = page.getByRole("form", { name: "Deploy PostgreSQL" });
      await form.waitFor();
      const secret = form.getByLabel("Password", { exact: true });
      expect(await secret.getAttribute("type")).toBe("password");
      await form.getByRole("button", { name: "Show Password" }).click();
      expect(await secret.getAttribute("type")).toBe("text");
      expect(await secret.inputValue()).toBe("");
      // no web page: no routing step, straight to the review
      await form.getByRole("button", { name: "Next" }).click();
      const steps = page.getByRole("list", { name: "Steps" });
      await steps.locator('[aria-current="step"]', { hasText: "Review" }).waitFor();
      const names = await form
        .locator('input[aria-label^="Name of variable"]')
        .evaluateAll((els) => (els as HTMLInputElement[]).map((e) => e.value));
      expect(names.sort()).toEqual(["POSTGRES_DB", "POSTGRES_PASSWORD", "POSTGRES_USER"]);
      const key = "POSTGRES_PASSWORD";
      const value = form.getByLabel(`Value of ${key}`, { exact: true });
      const first = await value.inputValue();
      expect(first).toMatch(/^[A-Za-z0-9]{32,}$/);
      expect(await value.getAttribute("type")).toBe("password");
      await form.getByRole("button", { name: `Regenerate ${key}` }).click();
      await until(async () => (await value.inputValue()) !== first, { what: "a new value" });
      expect(await value.inputValue()).toMatch(/^[A-Za-z0-9]{32,}$/);
      // the batteries are offered, checked, for a template with a database
      await form.getByLabel(/A daily backup of the database/).waitFor();
      expect(await form.getByLabel(/A daily backup of the database/).isChecked()).toBe(true);
      expect(await form.getByLabel(/An alert when the app goes down/).isChecked()).toBe(true);
      // the compose text reads the secret from the .env, never inline
      const compose = await form.getByLabel("Compose file").inputValue();
      expect(compose).not.toContain(first);
      expect(compose).toContain(`\${${key}}`);
      await shot("templates-review-secret.png");
      expect(await unlabeledControls(page)).toEqual([]);
      // nothing was deployed
      expect(((await pageFetch(page, "/api/apps")).body as unknown[]).length).toBe(0);
    },
    STEP_MS,
  );

  test(
    "the wizard deploys the static site on a quick-test name (saving public_host on the way) that answers through the proxy",
    async () => {
      await page.goto(`${url}/new-app`);
      await card("Static site (nginx)").getByRole("link").click();
      const form = page.getByRole("form", { name: "Deploy Static site (nginx)" });
      await form.waitFor();
      const slug = form.getByLabel("Slug");
      expect(await slug.inputValue()).toBe("static-site");
      await slug.fill(SLUG);
      await form.getByRole("button", { name: "Next" }).click();

      // routing: the quick test is the default, and explains public_host, which is not set yet
      expect(await form.getByLabel(/Quick test/).isChecked()).toBe(true);
      const note = form.getByRole("note");
      await note.getByText(/needs this server's public IP address/).waitFor();
      await shot("templates-routing-public-host.png");
      await note.getByLabel("Public IP address").fill("127.0.0.1");
      await note.getByRole("button", { name: "Save public host" }).click();
      await form.getByText(HOST, { exact: true }).waitFor();
      expect(((await pageFetch(page, "/api/system/public-host")).body as { public_host: string }).public_host).toBe("127.0.0.1");
      await form.getByRole("button", { name: "Next" }).click();

      // review: the rendered file carries the route; what is shown is what is deployed
      const editor = form.getByLabel("Compose file");
      await editor.waitFor();
      const text = await editor.inputValue();
      expect(text).toContain(`sundeck.domain: ${HOST}`);
      expect(text).toContain("sundeck.tls: local");
      await form.getByText(`https://${HOST}/`).first().waitFor();
      await shot("templates-review.png");
      await form.getByRole("button", { name: "Deploy" }).click();
      await form.getByRole("status").filter({ hasText: "Deploy succeeded" }).waitFor({ timeout: DEPLOY_MS });
      await form.getByRole("link", { name: `Open ${SLUG}` }).waitFor();
      await shot("templates-deployed.png");

      const app = (await pageFetch(page, `/api/apps/${SLUG}`)).body as { template: { id: string; version: number } };
      expect(app.template.id).toBe("static-site");
      const ca = await (await fetch(`${url}/trust/ca.crt`)).text();
      const body = await until(
        async () => {
          const r = await fetchTls(proxyPort, HOST, "/", ca).catch(() => null);
          return r?.status === 200 ? await r.text() : undefined;
        },
        { timeout: DEPLOY_MS, what: `${HOST} to answer through the proxy` },
      );
      expect(body.length).toBeGreaterThan(0);
      expect(pageProblems).toEqual([]);
    },
    STEP_MS,
  );

  test(
    "an app made from an older version of its template says the catalog holds a newer one, and shows the diff",
    async () => {
      const made = (await pageFetch(page, `/api/apps/${SLUG}`)).body as { template: { id: string; version: number } };
      // as if the app had been made before the catalog's last change to the template
      const db = new Database(join(cwd, "sundeck-data", "sundeck.db"));
      try {
        db.run("UPDATE apps SET template_json = ? WHERE slug = ?", [
          JSON.stringify({ id: made.template.id, version: made.template.version - 1 }),
          SLUG,
        ]);
      } finally {
        db.close();
      }
      await page.goto(`${url}/apps/${SLUG}`);
      const notice = page.getByRole("region", { name: "Template update" });
      await notice.getByText(`The catalog holds version ${made.template.version} of Static site (nginx)`).waitFor();
      await notice.getByRole("button", { name: "Show changes" }).click();
      // from the app's file (with its route) to the template's text (without): the route's lines are removed ones
      await notice.locator(".line-del", { hasText: `sundeck.domain: ${HOST}` }).waitFor();
      await shot("templates-newer-version.png");
    },
    STEP_MS,
  );

  test(
    "the Compose tab adds a service from a snippet: its service and volume in the file, its variables for the .env",
    async () => {
      await page.goto(`${url}/apps/${SLUG}?tab=compose`);
      const form = page.getByRole("form", { name: "Compose file" });
      const editor = form.getByLabel(`Compose file of ${SLUG}`);
      await editor.waitFor();
      await form.getByRole("button", { name: "Add a service…" }).click();
      const dialog = page.getByRole("dialog", { name: "Add a service" });
      await dialog.getByRole("button", { name: /^PostgreSQL/ }).click();
      await dialog.waitFor({ state: "hidden" });
      const note = form.getByRole("status").filter({ hasText: "Added PostgreSQL" });
      await note.waitFor();
      expect(await note.textContent()).toContain("New variables: POSTGRES_USER, POSTGRES_DB, POSTGRES_PASSWORD");
      const text = await editor.inputValue();
      expect(text).toContain("  postgres:\n");
      expect(text).toContain("image: postgres:");
      expect(text).toContain(`sundeck.domain: ${HOST}`);
      await shot("templates-snippet.png");
      await form.getByRole("button", { name: "Revert" }).click();
      expect(await editor.inputValue()).not.toContain("postgres:");
      expect(await unlabeledControls(page)).toEqual([]);
    },
    STEP_MS,
  );
});
