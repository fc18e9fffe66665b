/**
 * What the Chromium dashboard tests share: the browser with the flags this machine needs, a page watched for script
 * errors and CSP violations, the first-run setup, same-origin API calls made by the page, and a deploy through it.
 */
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { until } from "./http";

export const ADMIN = "admin";
export const ADMIN_PASSWORD = "first-run-password";

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Dashboard {
  browser: Browser;
  context: BrowserContext;
  page: Page;
}

/** Record uncaught page errors and CSP violations in `problems`: both mean the dashboard is broken somewhere. */
export function watchPage(p: Page, problems: string[]): void {
  p.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  p.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy|Refused to/i.test(m.text())) problems.push(`csp: ${m.text()}`);
  });
}

/** Chromium with one light, en-US page of `height` px, watched into `problems`. */
export async function openDashboard(problems: string[], height: number): Promise<Dashboard> {
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
  const context = await browser.newContext({ viewport: { width: 1280, height }, colorScheme: "light", locale: "en-US" });
  const page = await context.newPage();
  watchPage(page, problems);
  return { browser, context, page };
}

/** Create the super-admin through the first-run form and wait for the overview. */
export async function firstRunSetup(page: Page, url: string): Promise<void> {
  await page.goto(url);
  const setup = page.getByRole("form", { name: "First-run setup" });
  await setup.getByLabel("Username").fill(ADMIN);
  await setup.getByLabel("Password", { exact: true }).fill(ADMIN_PASSWORD);
  await setup.getByLabel("Confirm password").fill(ADMIN_PASSWORD);
  await setup.getByRole("button", { name: "Create administrator" }).click();
  await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
}

/** Form controls that have neither a <label> nor an aria-label. */
export async function unlabeledControls(p: Page): Promise<string[]> {
  return p.evaluate(() =>
    [...document.querySelectorAll<HTMLInputElement | HTMLSelectElement>("input, select, textarea")]
      .filter(
        (el) => !(el.labels && el.labels.length > 0) && !el.getAttribute("aria-label") && !el.getAttribute("aria-labelledby"),
      )
      .map((el) => el.outerHTML),
  );
}

/** Status and body (JSON when it parses) of a same-origin API call made by the page, with its session cookie. */
export async function pageFetch(
  p: Page,
  path: string,
  init: { method?: string; body?: unknown } = {},
): Promise<{ status: number; body: any }> {
  return p.evaluate(
    async ({ path, init }) => {
      const r = await fetch(path, {
        method: init.method ?? "GET",
        headers: init.body === undefined ? {} : { "content-type": "application/json" },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
      const text = await r.text();
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {}
      return { status: r.status, body };
    },
    { path, init },
  );
}

/** The status of a same-origin API call with a body, made by the page. */
export async function pageCall(p: Page, method: string, path: string, body?: unknown): Promise<number> {
  return (await pageFetch(p, path, { method, body })).status;
}

/** Deploy an app through the page's session (202) and wait until it runs. */
export async function deployFromPage(p: Page, slug: string, compose: string, timeout: number): Promise<void> {
  const deploy = await pageFetch(p, "/api/apps/deploy", { method: "POST", body: { slug, compose } });
  if (deploy.status !== 202) throw new Error(`deploy of ${slug} answered ${deploy.status}: ${JSON.stringify(deploy.body)}`);
  await until(async () => (await pageFetch(p, `/api/apps/${slug}`)).body?.status === "running", {
    timeout,
    what: "the app to run",
  });
}

/** The proxy's port, read from the process log line `proxy listening on ... port=N` (the listening line has no port). */
export async function proxyPortOf(p: Page): Promise<number> {
  return until(
    async () => {
      const logs = await pageFetch(p, "/api/system/process-logs");
      const line = (logs.body as string[]).find((l) => l.includes("proxy listening on"));
      const port = line ? /\bport=(\d+)/.exec(line)?.[1] : undefined;
      return port ? Number(port) : undefined;
    },
    { what: "the proxy listening line" },
  );
}

/** Sign in through the login form the page shows (a fresh context asked for any dashboard path). */
export async function signIn(p: Page, username: string, password: string): Promise<void> {
  const login = p.getByRole("form", { name: "Log in" });
  await login.getByLabel("Username").fill(username);
  await login.getByLabel("Password").fill(password);
  await login.getByRole("button", { name: "Log in" }).click();
}
