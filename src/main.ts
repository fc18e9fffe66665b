/**
 * Entry point of the `sundeck` executable: parses the command line (citty) and is the only place that exits the
 * process. Failures print one line on stderr and exit non-zero.
 */
import { defineCommand, runCommand } from "citty";
import { UsageError } from "./cli/exit";
import { failureOf } from "./cli/failure";
import { printUsage } from "./cli/help";
import { VERSION } from "./version";

const main = defineCommand({
  meta: { name: "sundeck", version: VERSION, description: "Self-hosted deployer for Docker Compose apps" },
  subCommands: {
    init: () => import("./cli/init").then((m) => m.default),
    serve: () => import("./cli/serve").then((m) => m.default),
    users: () => import("./cli/users").then((m) => m.default),
    apikey: () => import("./cli/apikey").then((m) => m.default),
    "restore-state": () => import("./cli/restore-state").then((m) => m.default),
    version: () => import("./cli/version").then((m) => m.default),
    upgrade: () => import("./cli/upgrade").then((m) => m.default),
    doctor: () => import("./cli/doctor").then((m) => m.default),
    // remote: through the HTTP API of the current context
    context: () => import("./cli/context").then((m) => m.default),
    whoami: () => import("./cli/whoami").then((m) => m.default),
    apply: () => import("./cli/apply").then((m) => m.default),
    remove: () => import("./cli/remove").then((m) => m.default),
    list: () => import("./cli/list").then((m) => m.default),
    status: () => import("./cli/status").then((m) => m.default),
    pull: () => import("./cli/pull").then((m) => m.default),
    diff: () => import("./cli/diff").then((m) => m.default),
    sync: () => import("./cli/sync").then((m) => m.default),
    logs: () => import("./cli/logs").then((m) => m.default),
    top: () => import("./cli/top").then((m) => m.default),
    start: () => import("./cli/lifecycle").then((m) => m.start),
    stop: () => import("./cli/lifecycle").then((m) => m.stop),
    restart: () => import("./cli/lifecycle").then((m) => m.restart),
    redeploy: () => import("./cli/lifecycle").then((m) => m.redeploy),
    scale: () => import("./cli/scale").then((m) => m.default),
    versions: () => import("./cli/versions").then((m) => m.default),
    rollback: () => import("./cli/rollback").then((m) => m.default),
    watch: () => import("./cli/watch").then((m) => m.default),
    cancel: () => import("./cli/cancel").then((m) => m.default),
    backup: () => import("./cli/backup").then((m) => m.default),
    git: () => import("./cli/git").then((m) => m.default),
    templates: () => import("./cli/templates").then((m) => m.default),
  },
});

async function resolveSub(argv: string[]) {
  // the deepest command named on the line, for --help
  let cmd: any = main;
  let parent: any;
  for (const word of argv) {
    if (word.startsWith("-")) break;
    const subs = typeof cmd.subCommands === "function" ? await cmd.subCommands() : cmd.subCommands;
    const next = subs?.[word];
    if (!next) break;
    parent = cmd;
    cmd = typeof next === "function" ? await next() : next;
  }
  return [cmd, parent] as const;
}

/**
 * A `--context NAME` before the command (`sundeck --context prod list`) is that command's own `--context`: moved
 * after the command's words, where citty reads it. A command that talks to no server refuses it.
 */
async function liftContext(argv: string[]): Promise<string[]> {
  const [flag, ...rest] = argv;
  let lifted: string[];
  if (flag === "--context" && rest.length) lifted = [flag, rest.shift()!];
  else if (flag?.startsWith("--context=")) lifted = [flag];
  else return argv;
  const [cmd, parent] = await resolveSub(rest);
  // no command, or a group without its subcommand: citty says what is missing
  if (cmd === main || cmd.subCommands) return rest;
  if (!cmd.args?.context) {
    const name = `${parent && parent !== main ? `${parent.meta?.name} ` : ""}${cmd.meta?.name}`;
    throw new UsageError(`--context is for the commands that talk to a server, not ${name}`);
  }
  return [...rest, ...lifted];
}

async function run(argv: string[]): Promise<number> {
  try {
    argv = await liftContext(argv);
    if (argv.length === 0 || argv.includes("--help") || argv.includes("-h")) {
      const [cmd, parent] = await resolveSub(argv);
      await printUsage(cmd, parent);
      return argv.length === 0 ? 2 : 0;
    }
    if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) argv = ["version"];
    await runCommand(main, { rawArgs: argv });
    return 0;
  } catch (e) {
    const { code, line } = failureOf(e);
    if (line !== null) process.stderr.write(`sundeck: ${line}\n`);
    return code;
  }
}

// private files by default: the database, secrets and configs we write are the owner's alone
process.umask(0o077);
void run(process.argv.slice(2)).then((code) => process.exit(code));
