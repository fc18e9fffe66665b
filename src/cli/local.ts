/** Shared plumbing of the server-side commands: load the config like `serve` does and open the context quietly. */
import { loadConfig } from "../config/load";
import { type Ctx, createContext } from "../context";
import { LogSink } from "../log/logger";
import type { Actor } from "../modules/activity/model";
import { CliError } from "./errors";
import { osUserName } from "./os-user";

export const configArg = {
  config: { type: "string", description: "config file (default $SUNDECK_CONFIG or /etc/sundeck/config.yaml)", valueHint: "path" },
} as const;

export const outputArg = {
  output: { type: "string", description: "output format: text or json", default: "text", valueHint: "text|json" },
} as const;

/** Open the local database through the server's config. */
export function openLocal(configPath?: string): Ctx {
  const { config, source } = loadConfig({ path: configPath });
  return createContext(config, { configSource: source, logs: new LogSink({ stdout: false }) });
}

/** The activity actor of a command run on the host: the operating-system user who ran it. */
export function cliActor(): Actor {
  return { userId: null, name: osUserName(), source: "cli", ip: null };
}

/** Print rows as JSON or as an aligned table. */
export function printRows<R extends object>(rows: R[], output: string, columns: Array<keyof R & string>): void {
  if (output === "json") {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  if (output !== "text") throw new CliError(`unknown output format ${output}: use text or json`);
  const cell = (v: unknown) => (v === null || v === undefined ? "-" : Array.isArray(v) ? v.join(",") || "-" : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]))
      .join("  ")
      .trimEnd();
  process.stdout.write(
    `${[line(columns.map((c) => c.toUpperCase())), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join("\n")}\n`,
  );
}
