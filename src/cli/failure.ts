/**
 * How a thrown error ends the process: its exit code and the one line printed on stderr. Failures of the work
 * (CliError, ClientError, ConfigError) exit 1; usage mistakes exit 2 with a pointer to --help, like citty's own.
 */
import { ClientError } from "../client/errors";
import { ConfigError } from "../config/schema";
import { CliError } from "./errors";
import { ExitCode } from "./exit";
import { plain } from "./help";

/** The end of a failed command: `line`, unless null, goes to stderr after "sundeck: ". */
export interface Failure {
  code: number;
  line: string | null;
}

/** A failure of one piece of work (exit 1), as opposed to a usage mistake, an interrupt or a bug. */
export function isWorkFailure(e: unknown): e is Error {
  return e instanceof CliError || e instanceof ConfigError || (e instanceof ClientError && !e.usage);
}

/** Map anything a command threw to its exit code and message. */
export function failureOf(e: unknown): Failure {
  const err = e as Error & { code?: unknown };
  if (e instanceof ExitCode) return { code: e.code, line: e.message || null };
  if (isWorkFailure(e)) return { code: 1, line: e.message };
  // citty's own argument errors, our UsageError (named like them) and a client's bad flag value
  if (e instanceof ClientError || err?.name === "CLIError" || (typeof err?.code === "string" && err.code.startsWith("E_"))) {
    const text = plain(err.message).replace(/\.$/, "");
    return { code: 2, line: `${text.charAt(0).toLowerCase()}${text.slice(1)} (see sundeck --help)` };
  }
  return { code: 1, line: err?.message ?? String(e) };
}
