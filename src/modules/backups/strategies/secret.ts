/**
 * Passwords of the database strategies: a plain variable of the container's environment, or the file its `*_FILE`
 * twin names (the official images' convention, used with compose `secrets:`). That file is inside the container, so
 * it is read there: the exec runs `sh -c`, which loads the file into the tool's variable and `exec`s the tool. Sundeck
 * sees the file's path only, never its content (not in argv, logs or errors). Trailing newlines are dropped, as the
 * official entrypoints do.
 */
import type { BackupContainer } from "../types";
import { envOf } from "./run";

/** Where a password comes from: its value, or a file in the container (`from`: the variable that named it). */
export type Secret = { value: string } | { file: string; from: string };

/** The first of `names` set (non-empty), else the first `<name>_FILE` set; null when none is. */
export function secretOf(c: BackupContainer, ...names: string[]): Secret | null {
  for (const n of names) {
    const v = envOf(c, n);
    if (v) return { value: v };
  }
  for (const n of names) {
    const file = envOf(c, `${n}_FILE`);
    if (file) return { file, from: `${n}_FILE` };
  }
  return null;
}

const NAME = /^[A-Z][A-Z0-9_]*$/;

/**
 * `cmd` run with the password in `variable` of its environment. A value is added to `env`; a file is read by a
 * shell in the container right before the tool runs (its path travels in the environment, never in the script).
 */
export function withSecret(
  cmd: string[],
  env: string[],
  variable: string,
  secret: Secret | null,
): { cmd: string[]; env: string[] } {
  if (!secret) return { cmd, env };
  if ("value" in secret) return { cmd, env: [...env, `${variable}=${secret.value}`] };
  if (!NAME.test(variable) || !NAME.test(secret.from)) throw new Error(`withSecret: bad variable name ${variable}`);
  const script = [
    'f="$SUNDECK_SECRET_FILE"',
    "unset SUNDECK_SECRET_FILE",
    `[ -f "$f" ] && [ -r "$f" ] || { echo "cannot read the secret file $f (${secret.from})" >&2; exit 1; }`,
    `${variable}="$(cat "$f")" || exit 1`,
    `export ${variable}`,
    'exec "$@"',
  ].join("; ");
  return { cmd: ["sh", "-c", script, "sh", ...cmd], env: [...env, `SUNDECK_SECRET_FILE=${secret.file}`] };
}
