import { describe, expect, it } from "bun:test";
import { WaitingAttempts } from "../../../src/proxy/forward";
import { splitUrl } from "../../../src/proxy/handler";
import { errorHtml, errorPage } from "../../../src/proxy/pages";
import { closeReason, sendableCloseCode } from "../../../src/proxy/websocket";

describe("request URL splitting", () => {
  const cases: Array<[string, string, string, string]> = [
    ["http://a.example.com/x/y?q=1", "a.example.com", "/x/y", "/x/y?q=1"],
    ["https://a.example.com:8443/", "a.example.com:8443", "/", "/"],
    ["http://[::1]:99/p?", "[::1]:99", "/p", "/p?"],
    ["http://a.example.com?q=1", "a.example.com", "/", "/?q=1"],
    ["http://a.example.com", "a.example.com", "/", "/"],
    ["/p?x", "", "/p", "/p?x"],
  ];
  for (const [url, authority, path, target] of cases) {
    it(`splits ${url}`, () => expect(splitUrl(url)).toEqual({ authority, path, target }));
  }
});

describe("websocket close codes", () => {
  it("maps codes that may not be sent to ones that may", () => {
    expect(sendableCloseCode(undefined)).toBe(1000);
    expect(sendableCloseCode(1005)).toBe(1000);
    expect(sendableCloseCode(1006)).toBe(1011);
    expect(sendableCloseCode(1015)).toBe(1011);
    expect(sendableCloseCode(1004)).toBe(1011);
    expect(sendableCloseCode(2000)).toBe(1011);
    for (const ok of [1000, 1001, 1008, 1011, 1013, 3000, 4999]) expect(sendableCloseCode(ok)).toBe(ok);
  });

  it("cuts reasons to 123 bytes without splitting characters", () => {
    expect(closeReason(undefined)).toBe("");
    expect(closeReason("bye")).toBe("bye");
    const cut = closeReason("é".repeat(100));
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(123);
    expect(cut).toBe("é".repeat(61));
  });
});

describe("error pages", () => {
  it("puts the status in the title, escapes the message and loads nothing external", async () => {
    const html = errorHtml(502, "<b>down</b>");
    expect(html).toContain("<title>502 Bad Gateway</title>");
    expect(html).toContain("&#60;b&#62;down&#60;/b&#62;");
    expect(html).not.toMatch(/https?:|<(link|script|img)\b/);
    expect(html.length).toBeLessThan(2048);
    const r = errorPage(503, "later", { "retry-after": "5" });
    expect(r.status).toBe(503);
    expect(r.headers.get("retry-after")).toBe("5");
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(await r.text()).toContain("503 Service Unavailable");
  });
});

describe("attempts waiting on replicas", () => {
  it("aborts the attempts of replicas that are no longer live, and only those", () => {
    const w = new WaitingAttempts();
    const a = new AbortController();
    const b = new AbortController();
    const c = new AbortController();
    w.add("10.0.0.1:80", a);
    w.add("10.0.0.1:80", b);
    w.add("10.0.0.2:80", c);
    w.delete("10.0.0.1:80", b);
    expect(w.abandon(new Set(["10.0.0.2:80"]))).toBe(1);
    expect(a.signal.aborted).toBe(true);
    expect(b.signal.aborted).toBe(false);
    expect(c.signal.aborted).toBe(false);
    expect(w.abandon(new Set())).toBe(1);
    expect(c.signal.aborted).toBe(true);
  });
});
