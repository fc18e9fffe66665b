/** Reading a secret: from an environment variable, else a no-echo prompt on a terminal, else a line of stdin. */
import { CliError } from "./errors";

/** Read a password for `what`. */
export async function readPassword(what: string, opts: { flag?: string; env?: string; confirm?: boolean } = {}): Promise<string> {
  if (opts.flag) return opts.flag;
  if (opts.env && process.env[opts.env]) return process.env[opts.env]!;
  if (!process.stdin.isTTY) {
    const line = (await readLine()).replace(/\r?\n$/, "");
    if (!line) throw new CliError(`no ${what} given: pass it on stdin, in ${opts.env ?? "the flag"}, or run on a terminal`);
    return line;
  }
  const first = await hiddenPrompt(`${what}: `);
  if (opts.confirm && (await hiddenPrompt(`repeat ${what}: `)) !== first) throw new CliError(`the two ${what}s differ`);
  return first;
}

async function readLine(): Promise<string> {
  let text = "";
  for await (const chunk of process.stdin) {
    text += chunk.toString();
    const nl = text.indexOf("\n");
    if (nl >= 0) return text.slice(0, nl);
  }
  return text;
}

function hiddenPrompt(question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    process.stderr.write(question);
    stdin.setRawMode(true);
    stdin.resume();
    let value = "";
    const done = (err?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off("data", onData);
      process.stderr.write("\n");
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (buf: Buffer) => {
      for (const ch of buf.toString("utf8")) {
        if (ch === "\r" || ch === "\n") return done();
        if (ch === "\u0003") return done(new CliError("cancelled"));
        if (ch === "\u007f" || ch === "\b") value = value.slice(0, -1);
        else if (ch >= " ") value += ch;
      }
    };
    stdin.on("data", onData);
  });
}
