/**
 * What a burst of log stream upgrades costs the database layer (issue 24, item 10): each upgrade authenticates (API key
 * or session, the user, the viewer's grant) and each open stream is rechecked every minute. Run through drizzle
 * unprepared, every lookup compiled a new SQLite statement that only the collector finalized: a thousand streams
 * opened thousands, and the server kept megabytes after they closed. The lookups use statements prepared once.
 */
import { describe, expect, it } from "bun:test";
import { startTestServer } from "../../../helpers/server";
import { openWs } from "../../../helpers/ws";

const STREAMS = 40;

describe("log stream upgrades", () => {
  it("authenticate keys, sessions and grants, and recheck open streams, without compiling a statement each time", async () => {
    const s = await startTestServer({ streams: { max_open: 1000, max_per_user: 1000 } });
    try {
      const viewer = await s.user("viewer", "viewer", ["demo"]);
      const key = s.keyFor("viewer", "streams");
      const sqlite = s.ctx.db.sqlite;
      const prepare = sqlite.prepare.bind(sqlite);
      const compiled: string[] = [];
      sqlite.prepare = ((q: string, ...rest: never[]) => {
        compiled.push(q);
        return prepare(q, ...rest);
      }) as typeof sqlite.prepare;
      try {
        for (let i = 0; i < STREAMS; i++) {
          for (const who of [{ bearer: key.key }, { cookie: viewer.cookie }]) {
            const ws = await openWs(s.url, "/api/apps/demo/logs?service=web&tail=0", who);
            // the upgrade was let in: refused ones close with 1008 before any frame
            expect((await ws.waitClose()).code).toBe(1000);
          }
        }
        const principal = await s.ctx.auth.resolve(new Request(s.url, { headers: { authorization: `Bearer ${key.key}` } }));
        for (let i = 0; i < STREAMS; i++) expect(await s.ctx.auth.recheck(principal!)).not.toBeNull();
      } finally {
        sqlite.prepare = prepare;
      }
      // the key's last_used_at is written at most once a minute: that write may compile, nothing else does
      const times = new Map<string, number>();
      for (const q of compiled) times.set(q, (times.get(q) ?? 0) + 1);
      const touch = [...times.keys()].filter((q) => q.startsWith('update "api_keys" set "last_used_at"'));
      for (const q of touch) expect(times.get(q)).toBe(1);
      for (const q of touch) times.delete(q);
      expect([...times]).toEqual([]);
    } finally {
      await s.stop();
    }
  }, 30_000);
});
