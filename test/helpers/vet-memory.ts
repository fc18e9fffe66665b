/**
 * Child process of bomb.test.ts: vets a plain tar of half a million empty files in a fresh process (so no other
 * test's heap decides when the collector runs) and prints `{growth_mib, entries}` as JSON.
 */
import { vetArchive } from "../../src/modules/backups/archive/vet";
import { concat, header } from "./tar-corpus";

const perChunk = 1000;
const chunk = concat(...Array.from({ length: perChunk }, (_, i) => header({ name: `d/${"n".repeat(80)}-${i}` })));
let sent = 0;
const many = new ReadableStream<Uint8Array>({
  pull(c) {
    if (sent === 500) {
      c.enqueue(new Uint8Array(1024));
      return c.close();
    }
    c.enqueue(chunk);
    sent++;
  },
});
Bun.gc(true);
const before = process.memoryUsage().rss;
let peak = before;
const timer = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss);
}, 1);
const r = await vetArchive(many, { maxBytes: 8 * 1024 ** 3 });
clearInterval(timer);
peak = Math.max(peak, process.memoryUsage().rss);
console.log(JSON.stringify({ growth_mib: (peak - before) / 2 ** 20, entries: r.entries, bytes: r.bytes }));
