/**
 * Exits other than the plain failure of CliError: usage mistakes (exit 2, like citty's own), a deliberate status
 * without a message (diff's 1 for "different"), and an interrupted wait (130).
 */

/** A command line the user must correct: one line on stderr, exit code 2. */
export class UsageError extends Error {
  override name = "CLIError";
  code = "E_USAGE";
}

/** End with `code`; `message`, when given, is the one line printed on stderr. */
export class ExitCode extends Error {
  constructor(
    readonly code: number,
    message = "",
  ) {
    super(message);
  }
}

/** Ctrl-C during a wait: exit 130 (128 + SIGINT) with the message. */
export class Interrupted extends ExitCode {
  constructor(message: string) {
    super(130, message);
  }
}
