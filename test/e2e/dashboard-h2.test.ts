/**
 * The dashboard behind `domain` over HTTP/2 (issue 29): the compiled binary in `local` TLS mode with `proxy.http2` on,
 * loaded by headless Chromium through the proxy; the page and every asset it loads arrive over h2 on one connection,
 * and the first-run setup works through it (API calls, the session cookie). Needs `bun run build` first.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Browser, chromium, type Page } from "playwright-core";
import { freePort } from "../helpers/apps";
import { type RunningBinary, startBinary } from "../helpers/binary";
import { ADMIN, ADMIN_PASSWORD, CHROMIUM_ARGS, watchPage } from "../helpers/dashboard";
import { tempDir } from "../helpers/tmp";

const DOMAIN = "sundeck.h2.test";
let server: RunningBinary | undefined;
let browser: Browser | undefined;
let page: Page;
let port: number;
const problems: string[] = [];

beforeAll(async () => {
  port = await freePort();
  server = await startBinary([], {
    cwd: tempDir("sundeck-dashboard-h2-"),
    env: {
      SUNDECK_MANAGEMENT_PORT: "0",
      SUNDECK_LISTEN_ADDR: `127.0.0.1:${port}`,
      SUNDECK_HTTP_LISTEN_ADDR: "",
      SUNDECK_TLS_MODE: "local",
      SUNDECK_DOMAIN: DOMAIN,
      SUNDECK_PROXY_HTTP2: "true",
    },
  });
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: [...CHROMIUM_ARGS, `--host-resolver-rules=MAP ${DOMAIN} 127.0.0.1`],
  });
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 }, locale: "en-US" });
  page = await context.newPage();
  watchPage(page, problems);
}, 60_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await server?.stop();
});

describe("the dashboard over HTTP/2", () => {
  test("loads over h2, every asset too, and the first-run setup signs in through it", async () => {
    await page.goto(`https://${DOMAIN}:${port}/`);
    const setup = page.getByRole("form", { name: "First-run setup" });
    await setup.waitFor();
    const protocols = await page.evaluate(() =>
      performance
        .getEntries()
        .flatMap((e) => ("nextHopProtocol" in e ? [[e.name, (e as PerformanceResourceTiming).nextHopProtocol]] : [])),
    );
    expect(protocols.length).toBeGreaterThan(1);
    expect(protocols[0][1]).toBe("h2");
    expect(protocols.filter(([, p]) => p !== "h2")).toEqual([]);
    await setup.getByLabel("Username").fill(ADMIN);
    await setup.getByLabel("Password", { exact: true }).fill(ADMIN_PASSWORD);
    await setup.getByLabel("Confirm password").fill(ADMIN_PASSWORD);
    await setup.getByRole("button", { name: "Create administrator" }).click();
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    const api = await page.evaluate(() =>
      performance
        .getEntriesByType("resource")
        .filter((e) => e.name.includes("/api/"))
        .map((e) => (e as PerformanceResourceTiming).nextHopProtocol),
    );
    expect(api.length).toBeGreaterThan(0);
    expect(api.every((p) => p === "h2")).toBe(true);
    expect(problems).toEqual([]);
  }, 60_000);
});
