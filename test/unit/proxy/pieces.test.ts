import { describe, expect, it } from "bun:test";
import { WaitingAttempts } from "../../../src/proxy/attempts";
import { errorAnswer, errorHtml } from "../../../src/proxy/pages";

describe("error pages", () => {
  it("puts the status in the title, escapes the message and loads nothing external", () => {
    const html = errorHtml(502, "<b>down</b>");
    expect(html).toContain("<title>502 Bad Gateway</title>");
    expect(html).toContain("&#60;b&#62;down&#60;/b&#62;");
    expect(html).not.toMatch(/https?:|<(link|script|img)\b/);
    expect(html.length).toBeLessThan(2048);
    const a = errorAnswer(503, "later", { "retry-after": "5" });
    expect(a.status).toBe(503);
    expect(a.headers["retry-after"]).toBe("5");
    expect(a.headers["cache-control"]).toBe("no-store");
    expect(a.body).toContain("503 Service Unavailable");
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
