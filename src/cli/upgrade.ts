/**
 * `sundeck upgrade [--version V] [--base-url URL]`: download the release for this machine, check it against
 * SHA256SUMS, swap the binary atomically (the old one stays as <binary>.previous), restart the service, and wait for
 * the new version to answer /api/health; when it does not, put the previous binary back and restart again.
 * The restart is `systemctl restart sundeck.service` when that unit is active, or the command in --restart-command
 * (SUNDECK_UPGRADE_RESTART_COMMAND; run by sh); with neither, the binary is swapped and the restart is left to you.
 */
import { accessSync, chmodSync, constants, copyFileSync, renameSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { defineCommand } from "citty";
import { configPath, loadConfig } from "../config/load";
import { COMMIT, VERSION } from "../version";
import { CliError } from "./errors";
import { configArg } from "./local";
import { downloadVerified, fileSum, releaseFileName, releaseUrl } from "./upgrade-release";

const UNIT = "sundeck.service";

async function run(cmd: string[]): Promise<{ code: number; out: string }> {
  try {
    const p = Bun.spawn(cmd, { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
    return { code, out: `${out}${err}`.trim() };
  } catch (e) {
    return { code: 127, out: (e as Error).message };
  }
}

/** How the service is restarted, or null when nobody said and no active unit runs it. */
async function restarter(explicit: string | undefined): Promise<{ what: string; cmd: string[] } | null> {
  const command = explicit || process.env.SUNDECK_UPGRADE_RESTART_COMMAND;
  if (command) return { what: command, cmd: ["sh", "-c", command] };
  if ((await run(["systemctl", "is-active", "--quiet", UNIT])).code === 0) {
    return { what: `systemctl restart ${UNIT}`, cmd: ["systemctl", "restart", UNIT] };
  }
  return null;
}

/** Wait until /api/health answers 200 with `version`; false when the deadline passes first. */
async function healthy(url: string, version: string, deadline: number): Promise<boolean> {
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(2000) });
      if (res.ok && ((await res.json()) as { version?: string }).version === version) return true;
    } catch {
      // not listening yet
    }
    await Bun.sleep(250);
  }
  return false;
}

export default defineCommand({
  meta: { name: "upgrade", description: "Install a newer release of this binary, restart the service, roll back if it fails" },
  args: {
    ...configArg,
    version: { type: "string", description: "release to install (default: the latest)", valueHint: "V" },
    "base-url": {
      type: "string",
      description: "where releases are (default $SUNDECK_INSTALL_BASE_URL or install.sh's)",
      valueHint: "url",
    },
    "restart-command": {
      type: "string",
      description: "restart the server with this shell command instead of systemctl",
      valueHint: "cmd",
    },
    timeout: { type: "string", description: "seconds the new version gets to answer /api/health", default: "90", valueHint: "s" },
  },
  async run({ args }) {
    const timeoutS = Number(args.timeout);
    if (!Number.isFinite(timeoutS) || timeoutS <= 0) throw new CliError(`--timeout ${args.timeout} is not a number of seconds`);
    const { path: cfgPath } = configPath({ path: args.config });
    const from = releaseUrl({ baseUrl: args["base-url"], version: args.version, configPath: cfgPath });
    const binary = process.execPath;
    const name = releaseFileName();
    const incoming = `${binary}.download`;
    const previous = `${binary}.previous`;
    const say = (line: string) => process.stdout.write(`${line}\n`);

    try {
      accessSync(dirname(binary), constants.W_OK);
    } catch {
      throw new CliError(`cannot replace ${binary}: ${dirname(binary)} is not writable (run sundeck upgrade as root)`);
    }
    say(`downloading ${from}/${name}`);
    await downloadVerified(from, name, incoming);
    chmodSync(incoming, 0o755);
    const probe = await run([incoming, "version"]);
    const newVersion = /^sundeck (\S+)/.exec(probe.out)?.[1];
    if (probe.code !== 0 || !newVersion) {
      rmSync(incoming, { force: true });
      throw new CliError(`the downloaded ${name} does not run here: ${probe.out.split("\n")[0] || `exit ${probe.code}`}`);
    }
    if ((await fileSum(incoming)) === (await fileSum(binary))) {
      rmSync(incoming, { force: true });
      say(`already at ${VERSION} (${COMMIT})`);
      return;
    }

    // the swap: keep the running binary, then rename the new one over it (atomic on the same filesystem)
    copyFileSync(binary, previous);
    renameSync(incoming, binary);
    say(`installed ${probe.out.split("\n")[0]} at ${binary} (previous kept at ${previous})`);

    const restart = await restarter(args["restart-command"]);
    if (!restart) {
      say(
        `restart sundeck to run it (no active ${UNIT}, and no --restart-command); \`sundeck version\` shows the binary's version`,
      );
      return;
    }
    const { config } = loadConfig({ path: args.config });
    const host = !config.management_addr || config.management_addr === "0.0.0.0" ? "127.0.0.1" : config.management_addr;
    const url = `http://${host.includes(":") ? `[${host}]` : host}:${config.management_port}`;

    say(`restarting: ${restart.what}`);
    const restarted = await run(restart.cmd);
    if (restarted.code === 0 && (await healthy(url, newVersion, Date.now() + timeoutS * 1000))) {
      say(`sundeck ${newVersion} is running and healthy`);
      return;
    }

    // roll back: the previous binary goes back in place (atomically) and is restarted
    const why = restarted.code === 0 ? `not healthy within ${timeoutS} s` : `restart failed: ${restarted.out.split("\n")[0]}`;
    say(`sundeck ${newVersion} ${why}; rolling back to ${VERSION}`);
    const back = `${binary}.rollback`;
    copyFileSync(previous, back);
    renameSync(back, binary);
    const again = await run(restart.cmd);
    const ok = again.code === 0 && (await healthy(url, VERSION, Date.now() + timeoutS * 1000));
    if (ok) say(`rolled back: sundeck ${VERSION} is running`);
    throw new CliError(
      `upgrade to ${newVersion} failed (${why}); rolled back to ${VERSION}${ok ? "" : ", which is not healthy either: check the service log"}`,
    );
  },
});
