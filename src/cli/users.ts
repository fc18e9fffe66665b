/** `sundeck users`: manage users directly in the local database (works while the server runs). */
import { defineCommand } from "citty";
import { HttpError } from "../lib/errors";
import { CliError } from "./errors";
import { cliActor, configArg, openLocal, outputArg, printRows } from "./local";
import { readPassword } from "./prompt";

const username = { type: "string", description: "user name", required: true, valueHint: "name" } as const;
const passwordFlag = {
  type: "string",
  description: "password (else $SUNDECK_PASSWORD, else a prompt)",
  valueHint: "pw",
} as const;

/** Turn service errors into one-line CLI errors. */
export function cliMessage(e: unknown): never {
  if (e instanceof HttpError) throw new CliError((e.reason ?? e.message).replace(/^[A-Z][a-z]+( [A-Z][a-z]+)*: /, ""));
  throw e;
}

const userByName = (ctx: ReturnType<typeof openLocal>, name: string) => {
  const u = ctx.userRepo.byUsername(name);
  if (!u) throw new CliError(`no user named ${name}`);
  return u;
};

const create = defineCommand({
  meta: { name: "create", description: "Create a user" },
  args: {
    ...configArg,
    username,
    password: passwordFlag,
    role: { type: "string", description: "super_admin, admin, manage or viewer", required: true },
  },
  async run({ args }) {
    const ctx = openLocal(args.config);
    try {
      const pw = await readPassword("password", { flag: args.password, env: "SUNDECK_PASSWORD", confirm: true });
      const u = await ctx.users.create({ username: args.username, password: pw, role: args.role }, cliActor()).catch(cliMessage);
      process.stdout.write(`created user ${u.username} (${u.role}), id ${u.id}\n`);
    } finally {
      ctx.db.close();
    }
  },
});

const list = defineCommand({
  meta: { name: "list", description: "List users" },
  args: { ...configArg, ...outputArg },
  run({ args }) {
    const ctx = openLocal(args.config);
    try {
      printRows(ctx.users.list(), args.output, ["id", "username", "role", "app_access", "created_at"]);
    } finally {
      ctx.db.close();
    }
  },
});

const del = defineCommand({
  meta: { name: "delete", description: "Delete a user and their API keys" },
  args: { ...configArg, username },
  run({ args }) {
    const ctx = openLocal(args.config);
    try {
      const u = userByName(ctx, args.username);
      try {
        ctx.users.delete(u.id, cliActor());
      } catch (e) {
        cliMessage(e);
      }
      process.stdout.write(`deleted user ${u.username}\n`);
    } finally {
      ctx.db.close();
    }
  },
});

const passwd = defineCommand({
  meta: { name: "passwd", description: "Set a user's password (ends their sessions)" },
  args: { ...configArg, username, password: passwordFlag },
  async run({ args }) {
    const ctx = openLocal(args.config);
    try {
      const u = userByName(ctx, args.username);
      const pw = await readPassword("new password", { flag: args.password, env: "SUNDECK_PASSWORD", confirm: true });
      await ctx.users.update(u.id, { password: pw }, cliActor()).catch(cliMessage);
      process.stdout.write(`password of ${u.username} changed\n`);
    } finally {
      ctx.db.close();
    }
  },
});

export default defineCommand({
  meta: { name: "users", description: "Manage users (on the server host)" },
  subCommands: { create, list, delete: del, passwd },
});
