/**
 * Notifications delivered for real: a server with allow_private_destinations on (logged loudly) sends to a Bun.serve
 * receiver on 127.0.0.1. Generic bodies are the AlertNotification, signed so the exported verifier accepts them and
 * refuses replays; Slack and Discord get their own formats; disabled and removed destinations get nothing; retries,
 * the delivery log and its cap; `test` with a stored destination uses the stored secret.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createWebhookRepo, DELIVERIES_KEPT } from "../../../../src/modules/webhooks/repo";
import { verifySignature } from "../../../../src/modules/webhooks/signing";
import type { AlertNotification } from "../../../../src/shared/alerts";
import { startTestServer, type TestServer } from "../../../helpers/server";
import { webhookReceiver } from "../../../helpers/webhook-receiver";

const SECRET = "receiver-shared-secret";

const firing: AlertNotification = {
  event: "alert.firing",
  rule: { id: 7, name: "blog cpu", kind: "cpu", threshold: 80, duration: "5m" },
  app_slug: "blog",
  state: "firing",
  value: 97.123,
  message: "cpu of blog at 97.1 % (above 80 % for 5m)",
  created_at: "2025-01-02T03:04:05.000Z",
};

let s: TestServer;
let rx: ReturnType<typeof webhookReceiver>;
let status = 200;
beforeAll(async () => {
  s = await startTestServer({ webhooks: { allow_private_destinations: true } }, { webhooks: { retryDelaysMs: [0, 0] } });
  rx = webhookReceiver(() => new Response("fine", { status }));
});
afterAll(async () => {
  rx.stop();
  await s.stop();
});

const create = async (body: Record<string, unknown>) => {
  const r = await s.root.post("/api/webhooks", { name: "rx", url: rx.url(), ...body });
  expect(r.status).toBe(201);
  return r.json.id as number;
};
const deliver = async (ids: number[], n = firing) => {
  const before = rx.received.length;
  s.ctx.webhooks.notify(ids, n);
  await s.ctx.webhooks.idle();
  return rx.received.slice(before);
};

describe("allow_private_destinations", () => {
  it("is logged loudly at start when on", () => {
    expect(s.ctx.logs.snapshot().some((l) => l.includes("WARN") && l.includes("allow_private_destinations is on"))).toBe(true);
  });
});

describe("generic", () => {
  it("sends the notification as JSON, signed over the timestamp and body", async () => {
    const id = await create({ kind: "generic", secret: SECRET });
    const [got] = await deliver([id]);
    expect(got.method).toBe("POST");
    expect(got.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(got.body)).toEqual(firing);
    const ts = got.headers["x-sundeck-timestamp"];
    const sig = got.headers["x-sundeck-signature-256"];
    expect(sig).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(5);
    expect(verifySignature(SECRET, ts, got.body, sig, Date.now(), 300)).toBe(true);
    // a replay outside the tolerance, another body, another secret: all refused
    expect(verifySignature(SECRET, ts, got.body, sig, Date.now() + 301_000, 300)).toBe(false);
    expect(verifySignature(SECRET, ts, got.body.replace("97.123", "1"), sig, Date.now(), 300)).toBe(false);
    expect(verifySignature("other", ts, got.body, sig, Date.now(), 300)).toBe(false);
    expect(verifySignature(SECRET, String(Number(ts) + 1), got.body, sig, Date.now(), 300)).toBe(false);
  });

  it("sends no signature headers without a secret", async () => {
    const id = await create({ kind: "generic" });
    const [got] = await deliver([id]);
    expect(got.headers["x-sundeck-signature-256"]).toBeUndefined();
    expect(got.headers["x-sundeck-timestamp"]).toBeUndefined();
  });
});

describe("slack and discord", () => {
  it("sends Slack an incoming-webhook message: a text fallback and blocks, unsigned", async () => {
    const id = await create({ kind: "slack", secret: SECRET });
    const [got] = await deliver([id], { ...firing, message: "<!channel> & more" });
    const m = JSON.parse(got.body);
    expect(Object.keys(m).sort()).toEqual(["blocks", "text"]);
    expect(m.text).toContain("[Firing] blog cpu (blog)");
    expect(m.blocks[0]).toEqual({ type: "header", text: { type: "plain_text", text: "[Firing] blog cpu (blog)", emoji: true } });
    expect(m.blocks[1]).toEqual({ type: "section", text: { type: "mrkdwn", text: "&lt;!channel&gt; &amp; more" } });
    expect(m.blocks[2].fields).toContainEqual({ type: "mrkdwn", text: "*Value*\n97.12" });
    expect(got.headers["x-sundeck-signature-256"]).toBeUndefined();
  });

  it("sends Discord an execute-webhook body: content and one embed, mentions off", async () => {
    const id = await create({ kind: "discord" });
    const [got] = await deliver([id], { ...firing, event: "alert.resolved", state: "resolved" });
    const m = JSON.parse(got.body);
    expect(m.content).toBe("[Resolved] blog cpu (blog)");
    expect(m.allowed_mentions).toEqual({ parse: [] });
    expect(m.embeds).toHaveLength(1);
    expect(m.embeds[0]).toMatchObject({
      title: "[Resolved] blog cpu (blog)",
      description: firing.message,
      color: 0x2da44e,
      timestamp: firing.created_at,
    });
    expect(m.embeds[0].fields).toContainEqual({ name: "App", value: "blog", inline: true });
  });
});

describe("which destinations get it", () => {
  it("skips disabled, removed and unknown destinations, and sends once per id", async () => {
    const on = await create({});
    const off = await create({ enabled: false });
    const gone = await create({});
    await s.root.del(`/api/webhooks/${gone}`);
    const got = await deliver([on, on, off, gone, 999999]);
    expect(got).toHaveLength(1);
  });

  it("returns to the caller before anything is sent", async () => {
    const id = await create({});
    const before = rx.received.length;
    s.ctx.webhooks.notify([id], firing);
    expect(rx.received.length).toBe(before);
    await s.ctx.webhooks.idle();
    expect(rx.received.length).toBe(before + 1);
  });
});

describe("retries and the delivery log", () => {
  it("logs each delivery, newest first, with status, duration and attempts", async () => {
    const id = await create({});
    await deliver([id]);
    await deliver([id], { ...firing, event: "alert.resolved", state: "resolved" });
    const log = (await s.root.get(`/api/webhooks/${id}/deliveries`)).json;
    expect(log.map((d: any) => d.event)).toEqual(["alert.resolved", "alert.firing"]);
    expect(log[0]).toMatchObject({ status: 200, attempts: 1, error: null });
    expect(log[0].duration_ms).toBeGreaterThanOrEqual(0);
    expect((await s.root.get(`/api/webhooks/${id}/deliveries?limit=1`)).json).toHaveLength(1);
  });

  it("retries a 5xx three times in all and logs the last answer", async () => {
    const id = await create({});
    status = 503;
    try {
      expect(await deliver([id])).toHaveLength(3);
    } finally {
      status = 200;
    }
    const [d] = (await s.root.get(`/api/webhooks/${id}/deliveries`)).json;
    expect(d).toMatchObject({ status: 503, attempts: 3, error: "receiver answered 503: fine" });
  });

  it("does not retry a 4xx", async () => {
    const id = await create({});
    status = 410;
    try {
      expect(await deliver([id])).toHaveLength(1);
    } finally {
      status = 200;
    }
    expect((await s.root.get(`/api/webhooks/${id}/deliveries`)).json[0]).toMatchObject({ status: 410, attempts: 1 });
  });

  it(`keeps the last ${DELIVERIES_KEPT} deliveries of each destination`, () => {
    const repo = createWebhookRepo(s.ctx.db);
    const a = repo.insert({
      name: "a",
      url: "https://example.com/",
      kind: "generic",
      secretEnc: null,
      enabled: true,
      createdAt: "",
      updatedAt: "",
    });
    const b = repo.insert({
      name: "b",
      url: "https://example.com/",
      kind: "generic",
      secretEnc: null,
      enabled: true,
      createdAt: "",
      updatedAt: "",
    });
    const row = (webhookId: number, n: number) => ({
      webhookId,
      event: `e${n}`,
      status: 200,
      durationMs: 1,
      attempts: 1,
      error: null,
      createdAt: "",
    });
    repo.logDelivery(row(b.id, 0));
    for (let n = 1; n <= DELIVERIES_KEPT + 5; n++) repo.logDelivery(row(a.id, n));
    const kept = repo.deliveries(a.id, 1000);
    expect(kept).toHaveLength(DELIVERIES_KEPT);
    expect(kept[0].event).toBe(`e${DELIVERIES_KEPT + 5}`);
    expect(kept.at(-1)!.event).toBe("e6");
    expect(repo.deliveries(b.id, 10)).toHaveLength(1);
    expect(repo.logDelivery(row(999999, 0))).toBe(false);
  });
});

describe("test", () => {
  it("sends one signed test notification to a stored destination with its stored secret", async () => {
    const id = await create({ kind: "generic", secret: SECRET });
    const before = rx.received.length;
    const r = await s.root.post("/api/webhooks/test", { id });
    expect(r.json).toEqual({ ok: true, status: 200, error: "" });
    const got = rx.received[before];
    expect(JSON.parse(got.body)).toMatchObject({ event: "test", state: "test", rule: null });
    expect(
      verifySignature(SECRET, got.headers["x-sundeck-timestamp"], got.body, got.headers["x-sundeck-signature-256"], Date.now()),
    ).toBe(true);
    expect((await s.root.get(`/api/webhooks/${id}/deliveries`)).json[0]).toMatchObject({
      event: "test",
      status: 200,
      attempts: 1,
    });
  });

  it("tests a URL that is not stored, once, reporting the receiver's status", async () => {
    status = 500;
    const before = rx.received.length;
    try {
      const r = await s.root.post("/api/webhooks/test", { url: rx.url("/elsewhere"), kind: "slack" });
      expect(r.json).toEqual({ ok: false, status: 500, error: "receiver answered 500: fine" });
    } finally {
      status = 200;
    }
    expect(rx.received.length).toBe(before + 1);
    expect(JSON.parse(rx.received[before].body).blocks).toBeArray();
  });
});
