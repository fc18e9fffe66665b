/**
 * Upload-restore as a hostile client would use it, on a real server (fake strategy and containers; the multipart
 * reader, the route and the restore slots are real): a body that arrives holds no restore slot, one body per app is
 * received at a time, and a body that stalls is cut (400) instead of waiting for the connection's idle timeout; a body of many parts is refused (text fields are held
 * in memory), and so is a line or a part header that keeps growing; refusals leave no temp file behind.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { connect } from "node:net";
import { join } from "node:path";
import { spoolMultipart } from "../../../src/modules/backups/upload";
import { composeOf, fakeContainers, fakeStrategy, seedApp } from "../../helpers/backups";
import { startTestServer, type TestServer } from "../../helpers/server";
import { tempDir } from "../../helpers/tmp";

let s: TestServer;
let key: string;
const postgres = fakeStrategy("postgres");
const B = "----attackboundary";

beforeAll(async () => {
  // one restore slot: a body that arrives must not hold it
  s = await startTestServer(
    { backups: { max_concurrent_restores: 1 } },
    { backups: { strategy: (id) => (id === "postgres" ? postgres : null), containers: fakeContainers() } },
  );
  seedApp(s.ctx, "shop", composeOf("db"));
  seedApp(s.ctx, "cafe", composeOf("db"));
  await s.user("mallory", "manage", ["shop", "cafe"]);
  key = s.keyFor("mallory").key;
}, 30_000);
afterAll(() => s.stop());

const part = (name: string, value: string, filename?: string) =>
  `--${B}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ""}\r\n\r\n${value}\r\n`;

/** POST a multipart body over fetch. */
const upload = (body: string, app = "shop") =>
  fetch(`${s.url}/api/apps/${app}/backups/upload-restore`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": `multipart/form-data; boundary=${B}` },
    body,
  });

/** Open an upload that sends its headers and the start of its body, then nothing more; returns its close. */
function stalled(): Promise<{ close(): void; answer: Promise<string> }> {
  const url = new URL(s.url);
  const start = `${part("strategy", "postgres")}--${B}\r\nContent-Disposition: form-data; name="file"; filename="a.gz"\r\n\r\nxxxx`;
  return new Promise((resolve, reject) => {
    const sock = connect(Number(url.port), url.hostname, () => {
      sock.write(
        `POST /api/apps/shop/backups/upload-restore HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${key}\r\n` +
          `Content-Type: multipart/form-data; boundary=${B}\r\nContent-Length: 1000000\r\n\r\n${start}`,
      );
      let text = "";
      const answer = new Promise<string>((done) => {
        sock.on("data", (d) => {
          text += d.toString();
          done(text);
        });
        sock.on("close", () => done(text));
      });
      resolve({ close: () => sock.destroy(), answer });
    });
    sock.on("error", reject);
  });
}

describe("restore slots and slow bodies", () => {
  it("holds no restore slot while a body arrives, receives one body per app at a time, and cuts a stalled one (400)", async () => {
    const held = await stalled();
    try {
      // a second body for the same app waits its turn
      const same = await upload(`${part("strategy", "postgres")}${part("file", "data", "a.gz")}--${B}--\r\n`);
      expect(same.status).toBe(429);
      expect(same.headers.get("retry-after")).toBe("30");
      expect(await same.text()).toContain("an upload to shop is already being received");
      // the only restore slot is free while the stalled body arrives: another app's restore goes ahead
      const other = await upload(
        `${part("strategy", "postgres")}${part("container", "sundeck-cafe-db-1")}${part("file", "data", "a.gz")}--${B}--\r\n`,
        "cafe",
      );
      expect(other.status).toBe(202);
      await s.ctx.backups.waitRestore((await other.json()).restore_id);
      expect(await held.answer).toMatch(/^HTTP\/1\.1 400[\s\S]*paused for more than 30 s/);
      expect(s.ctx.backups.uploads()).toEqual([]);
      const next = await upload(
        `${part("strategy", "postgres")}${part("container", "sundeck-shop-db-1")}${part("file", "data", "a.gz")}--${B}--\r\n`,
      );
      expect(next.status).toBe(202);
    } finally {
      held.close();
    }
  }, 60_000);

  it("cuts a body that trickles past its total time (the reader, with short limits)", async () => {
    const dir = tempDir("sundeck-attack-upload-");
    let n = 0;
    const trickle = new ReadableStream<Uint8Array>({
      async pull(c) {
        await Bun.sleep(20);
        c.enqueue(new TextEncoder().encode(n++ === 0 ? `\r\n--${B}\r\nContent-Disposition: form-data; name="x"\r\n\r\n` : "y"));
      },
    });
    const t0 = Date.now();
    await expect(
      spoolMultipart(trickle, `multipart/form-data; boundary=${B}`, join(dir, "f"), 1 << 20, { totalMs: 300, stallMs: 200 }),
    ).rejects.toThrow(/did not arrive within/);
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});

/** A stream of `first`, then `more` forever (every 1 ms), as a body that never ends. */
const endless = (first: string, more: string) => {
  let sent = false;
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      if (sent) await Bun.sleep(1);
      c.enqueue(new TextEncoder().encode(sent ? more : first));
      sent = true;
    },
  });
};

describe("multipart shapes", () => {
  it("refuses a boundary followed by a line that never ends, instead of holding and copying it whole", async () => {
    const dir = tempDir("sundeck-attack-upload-");
    const body = endless(`\r\n--${B}`, " ".repeat(64 * 1024));
    // cut at 8 MiB by the limit (413) when the reader keeps reading: it must give up long before
    await expect(spoolMultipart(body, `multipart/form-data; boundary=${B}`, join(dir, "f"), 8 << 20)).rejects.toThrow(
      /malformed multipart body/,
    );
  });

  it("refuses part headers over 8 KiB even when they arrive in one piece", async () => {
    const dir = tempDir("sundeck-attack-upload-");
    const big = `\r\n--${B}\r\nContent-Disposition: form-data; name="x"\r\nX-Pad: ${"a".repeat(20_000)}\r\n\r\nv\r\n--${B}--\r\n`;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode(big));
        c.close();
      },
    });
    await expect(spoolMultipart(body, `multipart/form-data; boundary=${B}`, join(dir, "f"), 1 << 20)).rejects.toThrow(
      /malformed multipart body/,
    );
  });

  it("refuses a body of many parts (fields are held in memory) and keeps no temp file", async () => {
    const many = Array.from({ length: 40 }, (_, i) => part(`f${i}`, "x".repeat(1000))).join("");
    const r = await upload(`${many}${part("strategy", "postgres")}${part("file", "data", "a.gz")}--${B}--\r\n`);
    expect(r.status).toBe(400);
    expect(await r.text()).toContain("at most 8 parts");
    expect(s.ctx.backups.uploads()).toEqual([]);
  });
});
