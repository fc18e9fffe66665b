/**
 * The Endpoints editor in a real Chromium against the compiled binary (TLS off, so the proxy is plain HTTP) and a real
 * Docker engine: an app routed on one host gets a second one in the editor (the browser's checks first), saved as a
 * new version and deployed with the live log, and the proxy answers on it with the app; removed again, it stops
 * routing. Needs `bun run build` first and a running dockerd.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import type { Browser, Locator, Page } from "playwright-core";
import { type RunningBinary, SERVE_ENV, startBinary } from "../helpers/binary";
import {
  deployFromPage,
  firstRunSetup,
  openDashboard,
  pageFetch,
  proxyPortOf,
  signIn,
  unlabeledControls,
} from "../helpers/dashboard";
import { ensureTestImages, removeProject, requireDocker } from "../helpers/docker";
import { until } from "../helpers/http";
import { tempDir } from "../helpers/tmp";

/** Per test: a deploy waits for the container to settle. */
const STEP_MS = 120_000;
const DEPLOY_MS = 90_000;
const SHOTS = process.env.SUNDECK_SHOTS ?? "/tmp/shots";

const RUN = Date.now().toString(36);
const SLUG = `uiendpoints-${RUN}`;
const FIRST = `one-${RUN}.test`;
const SECOND = `two-${RUN}.test`;
const RUN_LABEL = "Deploy (endpoints change)";

const COMPOSE = `services:
  web:
    image: sundeck-test/web:latest
    stop_grace_period: 1s
    labels:
      sundeck.domain: ${FIRST}
      sundeck.port: "8080"
  worker:
    image: sundeck-test/web:latest
    stop_grace_period: 1s
    network_mode: none
`;

let server: RunningBinary | undefined;
let url: string;
let browser: Browser | undefined;
let page: Page;
let proxyPort: number;
const pageProblems: string[] = [];

const appTab = (name: string) => page.getByRole("navigation", { name: "App sections" }).getByRole("link", { name, exact: true });
const editor = () => page.getByRole("form", { name: "Edit endpoints" });
const row = (n: number) => editor().getByRole("group", { name: `Endpoint ${n}`, exact: true });
const outcome = (): Locator => page.getByRole("region", { name: `${RUN_LABEL} output` }).getByRole("status");

/** The proxy's answer for `host` (status and body), or null while it cannot be reached. */
async function viaProxy(host: string): Promise<{ status: number; body: string } | null> {
  const r = await fetch(`http://127.0.0.1:${proxyPort}/`, { headers: { host } }).catch(() => null);
  return r ? { status: r.status, body: (await r.text()).trim() } : null;
}

/** The app's answer (the container's page) through its first host. */
async function appAnswer(): Promise<string> {
  return until(
    async () => {
      const r = await viaProxy(FIRST);
      return r?.status === 200 && r.body.length > 0 ? r.body : undefined;
    },
    { timeout: DEPLOY_MS, what: `the proxy to route ${FIRST}` },
  );
}

async function openEndpoints() {
  await page.goto(`${url}/apps/${SLUG}?tab=endpoints`);
  await page.getByRole("heading", { level: 1, name: SLUG }).waitFor();
  await appTab("Endpoints").waitFor();
}

beforeAll(async () => {
  await requireDocker();
  await ensureTestImages();
  server = await startBinary([], { cwd: tempDir("sundeck-dashboard-endpoints-e2e-"), env: { ...SERVE_ENV } });
  url = server.url;
  ({ browser, page } = await openDashboard(pageProblems, 900));
  await firstRunSetup(page, url);
  proxyPort = await proxyPortOf(page);
  await deployFromPage(page, SLUG, COMPOSE, DEPLOY_MS);
  await appAnswer();
}, STEP_MS);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await server?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
}, STEP_MS);

describe("dashboard endpoints editor", () => {
  test(
    "opens with the app's endpoint as a row, checks a new row in the browser before anything is sent",
    async () => {
      await openEndpoints();
      await page
        .getByRole("region", { name: `Endpoint ${FIRST}` })
        .getByText("web:8080")
        .waitFor();
      await page.getByRole("button", { name: "Edit endpoints" }).click();

      expect(await row(1).getByLabel("Service").inputValue()).toBe("web");
      expect(await row(1).getByLabel("Domain").inputValue()).toBe(FIRST);
      expect(await row(1).getByLabel("Port").inputValue()).toBe("8080");
      expect(await row(1).getByLabel("Path").inputValue()).toBe("");
      expect(await row(1).getByLabel("TLS").inputValue()).toBe("");
      // nothing changed yet: nothing to save
      expect(await editor().getByRole("button", { name: "Save and deploy" }).isDisabled()).toBe(true);

      await editor().getByRole("button", { name: "Add endpoint" }).click();
      const second = row(2);
      // the new row starts at the service's port
      expect(await second.getByLabel("Service").inputValue()).toBe("web");
      expect(await second.getByLabel("Port").inputValue()).toBe("8080");

      // a problem shows next to its field once the field is left
      await second.getByLabel("Domain").fill(`http://${SECOND}`);
      await second.getByLabel("Path").focus();
      await second.getByText("Enter the host name only, without http:// or https://").waitFor();
      expect(await second.getByLabel("Domain").getAttribute("aria-invalid")).toBe("true");
      await second.getByLabel("Path").fill("api");
      await second.getByLabel("Port").focus();
      await second.getByText("A path starts with /").waitFor();

      // the same host and path twice, and a port out of range: save sends nothing and says why
      await second.getByLabel("Domain").fill(FIRST.toUpperCase());
      await second.getByLabel("Path").fill("");
      await second.getByLabel("Port").fill("70000");
      const versions = (await pageFetch(page, `/api/apps/${SLUG}/versions`)).body.length;
      await editor().getByRole("button", { name: "Save and deploy" }).click();
      await editor().getByRole("alert").filter({ hasText: "Fix the fields marked above: nothing was sent." }).waitFor();
      await second.getByText(`${FIRST}/ is listed twice`).waitFor();
      await second.getByText("Enter a port from 1 to 65535").waitFor();
      mkdirSync(SHOTS, { recursive: true });
      await editor().screenshot({ path: `${SHOTS}/endpoints-editor-problems.png` });
      // the first invalid field has the focus
      expect(await second.getByLabel("Domain").evaluate((el) => el === document.activeElement)).toBe(true);
      expect((await pageFetch(page, `/api/apps/${SLUG}/versions`)).body.length).toBe(versions);

      await second.getByLabel("Domain").fill(SECOND);
      await second.getByLabel("Port").fill("8080");
      await second.getByText(`${FIRST}/ is listed twice`).waitFor({ state: "detached" });
      expect(await editor().locator('[aria-invalid="true"]').count()).toBe(0);
      expect(await unlabeledControls(page)).toEqual([]);

      await editor().screenshot({ path: `${SHOTS}/endpoints-editor.png` });
      await page.getByRole("button", { name: "Dark theme" }).click();
      try {
        expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe("dark");
        await editor().screenshot({ path: `${SHOTS}/endpoints-editor-dark.png` });
        await page.setViewportSize({ width: 375, height: 740 });
        const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
        expect(scroll).toBe(inner);
        await page.screenshot({ path: `${SHOTS}/endpoints-editor-phone.png`, fullPage: true });
      } finally {
        await page.setViewportSize({ width: 1280, height: 900 });
        await page.getByRole("button", { name: "Dark theme" }).click();
      }
    },
    STEP_MS,
  );

  test(
    "saves a second domain as a new version, shows the deploy's output, and the proxy routes it to the app",
    async () => {
      await appAnswer();
      expect((await viaProxy(SECOND))?.status).not.toBe(200);
      const before = (await pageFetch(page, `/api/apps/${SLUG}/versions`)).body.length;

      await editor().getByRole("button", { name: "Save and deploy" }).click();
      await outcome().getByText(`${RUN_LABEL} succeeded`).waitFor({ timeout: DEPLOY_MS });
      // the editor closes on success and the tab shows the new host
      await editor().waitFor({ state: "detached" });
      await page.getByRole("link", { name: `http://${SECOND}/` }).waitFor();
      await page.getByRole("link", { name: `http://${FIRST}/` }).waitFor();
      await page.screenshot({ path: `${SHOTS}/endpoints-tab.png`, fullPage: true });

      const routed = await until(
        async () => {
          const r = await viaProxy(SECOND);
          return r?.status === 200 ? r : undefined;
        },
        { timeout: DEPLOY_MS, what: `the proxy to route ${SECOND}` },
      );
      // the container the first host reaches (the new labels recreated it)
      expect(routed.body).toBe(await appAnswer());

      // written into the compose file as a new version
      expect((await pageFetch(page, `/api/apps/${SLUG}/versions`)).body.length).toBe(before + 1);
      const compose = (await pageFetch(page, `/api/apps/${SLUG}/compose`)).body.compose as string;
      expect(compose).toContain(SECOND);
      const app = (await pageFetch(page, `/api/apps/${SLUG}`)).body;
      expect(app.endpoints.flatMap((e: { hosts: string[] }) => e.hosts).sort()).toEqual([FIRST, SECOND].sort());
    },
    STEP_MS,
  );

  test(
    "a change the server refuses shows its reason in the editor, writes nothing and keeps the edits",
    async () => {
      await openEndpoints();
      await page.getByRole("button", { name: "Edit endpoints" }).click();
      const n = await editor().getByRole("group").count();
      await editor().getByRole("button", { name: "Add endpoint" }).click();
      const added = row(n + 1);
      // passes the browser's checks; the server refuses a domain on a service without a network
      await added.getByLabel("Service").selectOption("worker");
      expect(await added.getByLabel("Port").inputValue()).toBe("");
      await added.getByLabel("Domain").fill(`three-${RUN}.test`);
      await added.getByLabel("Port").fill("8080");
      const versions = (await pageFetch(page, `/api/apps/${SLUG}/versions`)).body.length;
      await editor().getByRole("button", { name: "Save and deploy" }).click();
      await editor()
        .getByRole("alert")
        .filter({ hasText: 'service "worker": a service with a domain cannot set network_mode none' })
        .waitFor();
      await editor().getByText("Nothing was written or started.").waitFor();
      expect((await pageFetch(page, `/api/apps/${SLUG}/versions`)).body.length).toBe(versions);
      expect(await added.getByLabel("Domain").inputValue()).toBe(`three-${RUN}.test`);
      await editor().getByRole("button", { name: "Cancel" }).click();
      await editor().waitFor({ state: "detached" });
      expect(await page.getByRole("link", { name: `http://three-${RUN}.test/` }).count()).toBe(0);
    },
    STEP_MS,
  );

  test(
    "removes the second domain again, and the proxy stops routing it",
    async () => {
      await page.getByRole("button", { name: "Edit endpoints" }).click();
      const rows = editor().getByRole("group");
      expect(await rows.count()).toBe(2);
      await editor()
        .getByRole("button", { name: new RegExp(`^Remove endpoint \\d \\(${SECOND.replace(/\./g, "\\.")}\\)$`) })
        .click();
      expect(await rows.count()).toBe(1);
      expect(await row(1).getByLabel("Domain").inputValue()).toBe(FIRST);
      await editor().getByRole("button", { name: "Save and deploy" }).click();
      await outcome().getByText(`${RUN_LABEL} succeeded`).waitFor({ timeout: DEPLOY_MS });
      await editor().waitFor({ state: "detached" });
      await page.getByRole("link", { name: `http://${FIRST}/` }).waitFor();
      await page.getByRole("link", { name: `http://${SECOND}/` }).waitFor({ state: "detached" });

      await until(async () => (await viaProxy(SECOND))?.status !== 200, {
        timeout: DEPLOY_MS,
        what: `the proxy to stop routing ${SECOND}`,
      });
      expect((await viaProxy(FIRST))?.status).toBe(200);
    },
    STEP_MS,
  );

  test(
    "with every endpoint removed, the empty tab offers to add one",
    async () => {
      await page.getByRole("button", { name: "Edit endpoints" }).click();
      await editor()
        .getByRole("button", { name: `Remove endpoint 1 (${FIRST})` })
        .click();
      await editor().getByText("No endpoints: saving removes every route to this app.").waitFor();
      await editor().getByRole("button", { name: "Save and deploy" }).click();
      await outcome().getByText(`${RUN_LABEL} succeeded`).waitFor({ timeout: DEPLOY_MS });
      await page.getByRole("heading", { name: "No endpoints" }).waitFor();
      await until(async () => (await viaProxy(FIRST))?.status !== 200, { timeout: DEPLOY_MS, what: `${FIRST} to stop routing` });

      await page.getByRole("button", { name: "Add an endpoint" }).click();
      expect(await row(1).getByLabel("Service").inputValue()).toBe("web");
      expect(await row(1).getByLabel("Domain").inputValue()).toBe("");
      await row(1).getByLabel("Domain").fill(FIRST);
      await row(1).getByLabel("Port").fill("8080");
      await editor().getByRole("button", { name: "Save and deploy" }).click();
      await outcome().getByText(`${RUN_LABEL} succeeded`).waitFor({ timeout: DEPLOY_MS });
      await page.getByRole("link", { name: `http://${FIRST}/` }).waitFor();
      await appAnswer();
    },
    STEP_MS,
  );

  test(
    "a viewer reads the endpoints but gets no editor",
    async () => {
      const user = { username: "vic", password: "vic-password-1", role: "viewer" };
      const created = await pageFetch(page, "/api/users", { method: "POST", body: user });
      expect(created.status).toBe(201);
      expect(
        (await pageFetch(page, `/api/users/${created.body.id}/access`, { method: "POST", body: { app_slug: SLUG } })).status,
      ).toBe(204);
      const viewer = await browser!.newContext({ locale: "en-US" });
      try {
        const p = await viewer.newPage();
        p.on("pageerror", (e) => pageProblems.push(`viewer page error: ${e.message}`));
        await p.goto(`${url}/apps/${SLUG}?tab=endpoints`);
        await signIn(p, user.username, user.password);
        await p.getByRole("link", { name: `http://${FIRST}/` }).waitFor();
        expect(await p.getByRole("button", { name: "Edit endpoints" }).count()).toBe(0);
        const put = await pageFetch(p, `/api/apps/${SLUG}/endpoints`, {
          method: "PUT",
          body: [{ service: "web", domain: SECOND, port: 8080 }],
        });
        expect(put.status).toBe(403);
      } finally {
        await viewer.close();
      }
      expect(pageProblems).toEqual([]);
    },
    STEP_MS,
  );
});
