/** Sundeck's error pages carry the status in the title, escape the message, load nothing external, are not cached. */
import { describe, expect, it } from "bun:test";
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
