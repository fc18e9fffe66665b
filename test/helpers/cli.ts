/** Run the `sundeck` command line from source in a child process, as a user would run it, against one server and key. */
import { resolve } from "node:path";

/** The CLI's entry point. */
export const MAIN = resolve(import.meta.dir, "../../src/main.ts");

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `sundeck ...args` with the server's URL and key in the environment, `home` as HOME, no stdin. */
export async function runSundeck(args: string[], target: { url: string; key: string; home: string }): Promise<CliRun> {
  const p = Bun.spawn([process.execPath, MAIN, ...args], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: target.home,
      XDG_CONFIG_HOME: target.home,
      SUNDECK_URL: target.url,
      SUNDECK_API_KEY: target.key,
    },
    cwd: target.home,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}
