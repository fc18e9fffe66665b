/**
 * The app's `.env` as the compose checks read it: the shared reader and writer (src/shared/envfile.ts), whose errors
 * become ComposeErrors (a 400 naming the line).
 */
import { EnvFileError, formatEnvFile as formatText, parseEnvFile as parseText } from "../shared/envfile";
import { ComposeError } from "./model";

export { ENV_KEY } from "../shared/envfile";

function asCompose<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof EnvFileError) throw new ComposeError(null, "env", e.message);
    throw e;
  }
}

/** Parse `.env` text into a map; a line that is not a comment, blank, or `KEY=VALUE` is a ComposeError naming it. */
export const parseEnvFile = (text: string): Record<string, string> => asCompose(() => parseText(text));

/** Write a map as `.env` text, one `KEY=VALUE` per line, quoting values where needed; keys must be valid names. */
export const formatEnvFile = (env: Record<string, string>): string => asCompose(() => formatText(env));
