/**
 * Usage text. citty colours it whenever NO_COLOR, TERM=dumb and CI are unset, also into a pipe or a file; help that
 * does not go to a terminal is printed as plain text.
 */
import { type CommandDef, renderUsage } from "citty";

const ANSI = /\x1b\[[0-9;]*m/g;

/** Remove colour and style escapes. */
export function plain(text: string): string {
  return text.replace(ANSI, "");
}

/** Print the usage of `cmd` (a subcommand of `parent`) on stdout, coloured only on a terminal. */
export async function printUsage(cmd: CommandDef<any>, parent?: CommandDef<any>, out = process.stdout): Promise<void> {
  const text = `${await renderUsage(cmd, parent)}\n`;
  out.write(`${out.isTTY ? text : plain(text)}\n`);
}
