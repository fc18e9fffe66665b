/** The shape of one `sundeck doctor` check, and the guard that keeps a slow probe from holding up the report. */

export type CheckStatus = "ok" | "warn" | "fail";

/** One line of the report: `fail` blocks (exit 1), `warn` is worth a look, `ok` is fine. */
export interface CheckResult {
  name: string;
  status: CheckStatus;
  detail: string;
}

/** Every probe gives up after this long; all run at once, so the whole report stays under 5 s. */
export const PROBE_TIMEOUT_MS = 3000;

export const ok = (name: string, detail: string): CheckResult => ({ name, status: "ok", detail });
export const warn = (name: string, detail: string): CheckResult => ({ name, status: "warn", detail });
export const fail = (name: string, detail: string): CheckResult => ({ name, status: "fail", detail });

/** Run `probe`; a throw becomes a fail naming the error, a probe past `ms` becomes `onTimeout` (a warn by default). */
export async function guarded(
  name: string,
  probe: () => Promise<CheckResult | CheckResult[]>,
  ms = PROBE_TIMEOUT_MS + 500,
  onTimeout: CheckStatus = "warn",
): Promise<CheckResult[]> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<CheckResult[]>((resolve) => {
    timer = setTimeout(() => resolve([{ name, status: onTimeout, detail: `no answer within ${ms / 1000}s` }]), ms);
  });
  try {
    const run = probe().then(
      (r) => (Array.isArray(r) ? r : [r]),
      (e) => [fail(name, oneLine(e))],
    );
    return await Promise.race([run, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** An error as one short line. */
export function oneLine(e: unknown): string {
  return String((e as Error)?.message ?? e)
    .split("\n")[0]
    .slice(0, 200);
}

/** Bytes as a short human figure (GiB with one decimal, or MiB). */
export function humanBytes(n: number): string {
  return n >= 1024 ** 3 ? `${(n / 1024 ** 3).toFixed(1)} GiB` : `${Math.round(n / 1024 ** 2)} MiB`;
}
