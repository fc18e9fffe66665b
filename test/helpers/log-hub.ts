/** A log hub on a scripted engine, with the short retry and linger times the hub's tests use. */
import { LogSink } from "../../src/log/logger";
import { createLogHub } from "../../src/modules/logs/hub";
import { ScriptedEngine } from "./fake-engine";

export function scriptedHub(
  o: {
    giveUpMs?: number;
    lingerMs?: number;
    maxIdle?: number;
    collect?: () => void;
    collectEveryMs?: number;
    now?: () => number;
  } = {},
) {
  const engine = new ScriptedEngine();
  const hub = createLogHub({
    engine: () => engine.asEngine(),
    log: new LogSink({ stdout: false }).logger("logs"),
    retryMs: 5,
    retryMaxMs: 20,
    giveUpMs: o.giveUpMs ?? 10_000,
    lingerMs: o.lingerMs ?? 50,
    maxIdle: o.maxIdle,
    // no full collection after every test's idle hub unless the test is about it
    collect: o.collect ?? null,
    collectEveryMs: o.collectEveryMs,
    now: o.now,
  });
  return { engine, hub };
}
