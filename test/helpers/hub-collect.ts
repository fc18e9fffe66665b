/**
 * Child process of hub.test.ts: a feed watched once and left is collected with its ring. It runs in a fresh process
 * because a collector's verdict on one object is only trustworthy in a small heap: in the full suite's process a
 * conservatively scanned stack word or a pending large collection kept the feed alive past any sane wait.
 * Prints `{ring_size_after_stop, feeds, collected}` as JSON.
 */
import { at } from "./fake-engine";
import { until } from "./http";
import { scriptedHub } from "./log-hub";

const { engine, hub } = scriptedHub({ lingerMs: 20 });
engine.running.set("c6", true);
engine.write("c6", ...Array.from({ length: 200 }, (_, i) => at(i, `old ${i}`)));
// the feed is only reachable through the hub: this function's frame is gone once it returns
const watchAndLeave = async () => {
  const f = hub.feed("c6");
  await f.ready;
  const stop = hub.watch(f, { line() {}, end() {} });
  await until(() => engine.openFollows("c6") === 1, { what: "the follow" });
  if (f.ring.size !== 200) throw new Error(`ring held ${f.ring.size} lines, not 200`);
  stop();
  return { f: new WeakRef(f), ring: new WeakRef(f.ring) };
};
const refs = await watchAndLeave();
await until(() => hub.stats().feeds === 0, { what: "the feed to stop after the linger" });
await until(() => engine.openFollows("c6") === 0, { what: "the engine follow to end" });
const ringSize = refs.ring.deref()?.size ?? 0;
let collected = false;
for (let i = 0; i < 100 && !collected; i++) {
  await Bun.sleep(10);
  Bun.gc(true);
  collected = refs.f.deref() === undefined && refs.ring.deref() === undefined;
}
console.log(JSON.stringify({ ring_size_after_stop: ringSize, feeds: hub.stats().feeds, collected }));
