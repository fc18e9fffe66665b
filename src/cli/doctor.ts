/**
 * `sundeck doctor`: what a server needs and how this host stands, as one table of checks (ok, warn, fail). Reads the
 * server config like `serve` does. Every probe runs at once with a short deadline, so a dead Docker engine or DNS
 * costs seconds, not minutes. Exit 1 when a check fails (it blocks `sundeck serve` or deploys), else 0.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { defineCommand } from "citty";
import { loadConfig, configPath as resolveConfigPath } from "../config/load";
import { type Config, effectiveHttpListenAddr } from "../config/schema";
import { type CheckResult, fail, guarded, oneLine } from "./doctor/check";
import { composeCheck, engineCheck, engineFacts, socketCheck } from "./doctor/docker";
import { certCheck, clockCheck, configCheck, diskCheck, dnsCheck, writableCheck } from "./doctor/host";
import { type PortSpec, parseListenAddr, portChecks } from "./doctor/ports";
import { subnetPoolCheck } from "./doctor/subnets";
import { CliError } from "./errors";
import { ExitCode } from "./exit";
import { configArg, outputArg, printRows } from "./local";

/** Where the clock is compared when no --time-url is given (its Date header; HEAD, no body). */
export const DEFAULT_TIME_URL = "https://www.cloudflare.com/";

export default defineCommand({
  meta: { name: "doctor", description: "Check this host for what a Sundeck server needs; exit 1 when something blocks" },
  args: {
    ...configArg,
    ...outputArg,
    "time-url": {
      type: "string",
      description: `URL whose Date header the clock is compared with ("" skips; default $SUNDECK_DOCTOR_TIME_URL or ${DEFAULT_TIME_URL})`,
      valueHint: "url",
    },
  },
  async run({ args }) {
    if (args.output !== "text" && args.output !== "json")
      throw new CliError(`unknown output format ${args.output}: use text or json`);
    const timeUrl = args["time-url"] ?? process.env.SUNDECK_DOCTOR_TIME_URL ?? DEFAULT_TIME_URL;
    const checks = await runChecks(args.config, timeUrl);
    const blocked = checks.some((c) => c.status === "fail");
    if (args.output === "json") {
      process.stdout.write(`${JSON.stringify({ checks, ok: !blocked }, null, 2)}\n`);
    } else {
      printRows(checks, "text", ["name", "status", "detail"]);
      const fails = checks.filter((c) => c.status === "fail").length;
      const warns = checks.filter((c) => c.status === "warn").length;
      process.stdout.write(
        blocked
          ? `\n${fails} check${fails === 1 ? "" : "s"} failed: fix ${fails === 1 ? "it" : "them"} before running Sundeck here\n`
          : `\nno blocking problem${warns ? ` (${warns} warning${warns === 1 ? "" : "s"})` : ""}\n`,
      );
    }
    if (blocked) throw new ExitCode(1);
  },
});

/** Every check, in report order; the config's own failure is a check too (the Docker checks still run). */
export async function runChecks(configPath: string | undefined, timeUrl: string): Promise<CheckResult[]> {
  const env = process.env;
  let config: Readonly<Config> | null = null;
  let configResult: CheckResult;
  try {
    // the embedded default would write a master secret into ./sundeck-data: a diagnosis leaves no files behind
    const { path } = resolveConfigPath({ path: configPath });
    const embedded = !existsSync(resolve(path));
    const loaded = loadConfig({ path: configPath, overrides: embedded ? { master_secret: "doctor-does-not-need-it" } : {} });
    config = loaded.config;
    configResult = configCheck(config, loaded.source);
  } catch (e) {
    configResult = fail("config", oneLine(e));
  }

  const facts = engineFacts(env);
  const groups: Array<Promise<CheckResult[]>> = [
    guarded("docker engine", async () => engineCheck(await facts), undefined, "fail"),
    guarded("docker compose", () => composeCheck(env), 4500),
    guarded("docker socket", async () => socketCheck(env)),
  ];
  if (config) {
    const c = config;
    groups.push(
      guarded("ports", () => portChecks(portSpecs(c), healthUrl(c)), undefined, "fail"),
      guarded("dns", () => dnsCheck(c)),
      guarded("certificates", async () => certCheck(c)),
      guarded("disk (data_dir)", async () => diskCheck("disk (data_dir)", c.data_dir)),
      guarded("docker subnet pool", () => subnetPoolCheck(c, env)),
    );
  }
  groups.push(
    guarded("disk (docker root)", async () => {
      const f = await facts;
      if (!f.rootDir) return { name: "disk (docker root)", status: "warn", detail: "unknown: the engine did not answer" };
      // in a container the engine's root is on the host, out of sight: the container's own disk says nothing of it
      if (!existsSync(f.rootDir))
        return { name: "disk (docker root)", status: "warn", detail: `${f.rootDir} is not visible from here` };
      return diskCheck("disk (docker root)", f.rootDir);
    }),
    guarded("clock", () => clockCheck(timeUrl)),
  );
  if (config) {
    const c = config;
    groups.push(
      guarded("data dir", async () => writableCheck("data dir", c.data_dir)),
      guarded("apps dir", async () => writableCheck("apps dir", c.apps_dir)),
    );
  }
  return [...(await Promise.all(groups)).flat(), configResult];
}

/** The listeners `serve` would open with this config (the same host:port once). */
export function portSpecs(c: Config): PortSpec[] {
  const specs: PortSpec[] = [{ label: c.tls.mode === "off" ? "proxy" : "https", ...parseListenAddr(c.listen_addr) }];
  const plain = effectiveHttpListenAddr(c);
  if (plain) specs.push({ label: "http", ...parseListenAddr(plain) });
  if (c.management_port) {
    const host = c.management_addr === "localhost" ? "127.0.0.1" : c.management_addr;
    specs.push({ label: "management", host: host === "0.0.0.0" ? "" : host, port: c.management_port });
  }
  return specs.filter((s, i) => specs.findIndex((o) => o.host === s.host && o.port === s.port) === i);
}

/** /api/health of the management listener of this config, as a client on this host reaches it. */
function healthUrl(c: Config): string | null {
  if (!c.management_port) return null;
  const a = c.management_addr;
  const host = !a || a === "0.0.0.0" ? "127.0.0.1" : a === "::" ? "[::1]" : a.includes(":") ? `[${a}]` : a;
  return `http://${host}:${c.management_port}/api/health`;
}
