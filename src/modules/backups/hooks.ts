/**
 * Pre and post hooks: commands run with `sh -c` in the service's container, one after the other. A failing pre hook
 * fails the run before anything is dumped; post hooks run after every attempt, failed ones included, because they
 * usually undo what a pre hook did (unlock tables, resume writes) and must not be skipped by a failure.
 */
import type { ServiceContainers } from "./containers";
import type { BackupContainer } from "./types";

/** How long one hook may run before the run gives up on it (its processes are stopped in the container: SIGTERM, then SIGKILL after 3 s). */
export const HOOK_TIMEOUT_MS = 15 * 60_000;

/** Run hooks in order; throws naming the first one that fails or times out, with the last line of its output. */
export async function runHooks(
  containers: ServiceContainers,
  c: BackupContainer,
  which: "pre" | "post",
  hooks: string[],
  signal?: AbortSignal,
  timeoutMs = HOOK_TIMEOUT_MS,
): Promise<void> {
  const late = (i: number) =>
    new Error(
      `${which} hook ${i + 1} timed out after ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`}`,
    );
  for (const [i, cmd] of hooks.entries()) {
    const limit = AbortSignal.timeout(timeoutMs);
    const r = await containers.exec(c, cmd, signal ? AbortSignal.any([signal, limit]) : limit).catch((e) => {
      if (limit.aborted) throw late(i);
      throw e;
    });
    if (limit.aborted) throw late(i);
    if (r.code !== 0) {
      const last = withoutEnv(r.output, c.env).trim().split("\n").pop()?.slice(0, 300) ?? "";
      throw new Error(`${which} hook ${i + 1} failed (exit ${r.code})${last ? `: ${last}` : ""}`);
    }
  }
}

/** Variables whose values are no secret and common in output (paths, versions; `*_FILE` names where a secret is). */
const PLAIN_ENV = /^(PATH|HOME|HOSTNAME|LANG|LC_[A-Z]+|TERM|PWD|SHELL|USER|[A-Z0-9_]*_VERSION|PGDATA|[A-Z0-9_]*_FILE)$/;
export const ENV_MASK = "[env]";

/**
 * `text` with every value of the container's environment (8 characters or more, plain ones aside) replaced: a
 * hook's output lands in the run's error, which viewers of the app read, and they are not shown env values.
 */
export function withoutEnv(text: string, env: readonly string[]): string {
  const values = env
    .map((e) => [e.slice(0, Math.max(0, e.indexOf("="))), e.slice(e.indexOf("=") + 1)])
    .filter(([k, v]) => k && v.length >= 8 && !PLAIN_ENV.test(k))
    .map(([, v]) => v)
    .sort((a, b) => b.length - a.length);
  let out = text;
  for (const v of values) out = out.split(v).join(ENV_MASK);
  return out;
}

/** The hooks of a config row (JSON arrays). */
export function hooksOf(json: string): string[] {
  try {
    const v = JSON.parse(json);
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
}
