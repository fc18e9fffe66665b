/**
 * The remote client's one error type: a failed call, stream, client config or local file, carrying one line safe to
 * show. The client never decides how the process ends; the CLI maps this to its exit codes (src/cli/failure.ts).
 */

/** A client failure with a one-line message. `usage` marks a value the caller must correct (a bad flag value). */
export class ClientError extends Error {
  override name = "ClientError";
  readonly usage: boolean;

  constructor(message: string, opts: { usage?: boolean } = {}) {
    super(message);
    this.usage = opts.usage ?? false;
  }
}
