/** Payload builders and signing on their own: each format's documented limits, the test notification, the verifier's edges. */
import { describe, expect, it } from "bun:test";
import { createHmac } from "node:crypto";
import { discordMessage, render, slackMessage, testNotification } from "../../../../src/modules/webhooks/payloads";
import { signatureHeaders, verifySignature } from "../../../../src/modules/webhooks/signing";
import type { AlertNotification } from "../../../../src/shared/alerts";

const long: AlertNotification = {
  event: "alert.firing",
  rule: { id: 1, name: "r".repeat(500), kind: "memory", threshold: 85, duration: "5m" },
  app_slug: "shop",
  state: "firing",
  value: 91,
  message: "m".repeat(10_000),
  created_at: "2025-01-02T03:04:05.000Z",
};

describe("formats and their limits", () => {
  it("keeps Slack texts within Block Kit's limits", () => {
    const m = slackMessage(long);
    expect(m.text.length).toBeLessThanOrEqual(3000);
    expect((m.blocks[0] as any).text.text.length).toBeLessThanOrEqual(150);
    expect((m.blocks[1] as any).text.text.length).toBeLessThanOrEqual(3000);
    expect((m.blocks[2] as any).fields.length).toBeLessThanOrEqual(10);
  });

  it("keeps Discord texts within the embed limits", () => {
    const m = discordMessage(long);
    expect(m.content.length).toBeLessThanOrEqual(2000);
    expect(m.embeds[0].title.length).toBeLessThanOrEqual(256);
    expect(m.embeds[0].description.length).toBeLessThanOrEqual(4096);
    expect(m.embeds[0].fields.every((f) => f.name.length <= 256 && f.value.length <= 1024)).toBe(true);
  });

  it("sends the generic notification field for field, nothing added", () => {
    const n = testNotification("2025-01-01T00:00:00.000Z");
    const { body, headers } = render("generic", n, null, 0);
    expect(JSON.parse(body)).toEqual(n);
    expect(headers).toEqual({});
    expect(n).toMatchObject({ event: "test", state: "test", rule: null, app_slug: null, value: null });
  });
});

describe("signing", () => {
  const body = '{"event":"test"}';
  const now = 1_700_000_000_000;

  it('signs HMAC-SHA256 of "<timestamp>.<body>" as CONTRACT says', () => {
    const h = signatureHeaders("k", body, now);
    expect(h["X-Sundeck-Timestamp"]).toBe("1700000000");
    expect(h["X-Sundeck-Signature-256"]).toBe(`sha256=${createHmac("sha256", "k").update(`1700000000.${body}`).digest("hex")}`);
    expect(render("generic", JSON.parse(body), "k", now).headers).toEqual({ ...h });
  });

  it("accepts within the tolerance either way and refuses outside it", () => {
    const h = signatureHeaders("k", body, now);
    const ts = h["X-Sundeck-Timestamp"];
    const sig = h["X-Sundeck-Signature-256"];
    expect(verifySignature("k", ts, body, sig, now + 300_000, 300)).toBe(true);
    expect(verifySignature("k", ts, body, sig, now - 300_000, 300)).toBe(true);
    expect(verifySignature("k", ts, body, sig, now + 301_000, 300)).toBe(false);
    expect(verifySignature("k", ts, body, sig, now - 301_000, 300)).toBe(false);
  });

  it.each([
    [null, "sha256=" + "0".repeat(64)],
    ["1700000000", null],
    ["-1", "sha256=" + "0".repeat(64)],
    ["1e9", "sha256=" + "0".repeat(64)],
    ["1700000000", "sha1=" + "0".repeat(40)],
    ["1700000000", "sha256=" + "0".repeat(63)],
    ["1700000000", "SHA256=" + "0".repeat(64)],
  ])("refuses malformed headers (%p, %p)", (ts, sig) => {
    expect(verifySignature("k", ts, body, sig, now)).toBe(false);
  });
});
