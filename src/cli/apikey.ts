/** `sundeck apikey`: create, list and revoke API keys in the local database. */
import { defineCommand } from "citty";
import { parseDuration } from "../lib/duration";
import { iso } from "../lib/time";
import { CliError } from "./errors";
import { cliActor, configArg, openLocal, outputArg, printRows } from "./local";
import { cliMessage } from "./users";

const create = defineCommand({
  meta: { name: "create", description: "Create an API key for a user; prints the key once" },
  args: {
    ...configArg,
    username: { type: "string", description: "owner", required: true },
    name: { type: "string", description: "a name to recognise the key by", required: true },
    expires: { type: "string", description: "lifetime such as 30d or 12h (default: never)", valueHint: "duration" },
    ...outputArg,
  },
  run({ args }) {
    const ctx = openLocal(args.config);
    try {
      const u = ctx.userRepo.byUsername(args.username);
      if (!u) throw new CliError(`no user named ${args.username}`);
      let expiresAt: string | null = null;
      if (args.expires) {
        const ms = parseDuration(args.expires);
        if (!ms || ms <= 0) throw new CliError(`--expires must be a duration such as 30d or 12h`);
        expiresAt = iso(Date.now() + ms);
      }
      const created = (() => {
        try {
          return ctx.apiKeys.create(u, args.name, expiresAt, cliActor());
        } catch (e) {
          return cliMessage(e);
        }
      })();
      if (args.output === "json") process.stdout.write(`${JSON.stringify(created, null, 2)}\n`);
      else process.stdout.write(`${created.key}\n`);
      if (args.output !== "json" && process.stderr.isTTY) process.stderr.write("store this key now: it cannot be shown again\n");
    } finally {
      ctx.db.close();
    }
  },
});

const list = defineCommand({
  meta: { name: "list", description: "List API keys (never the keys themselves)" },
  args: { ...configArg, username: { type: "string", description: "only this user's keys" }, ...outputArg },
  run({ args }) {
    const ctx = openLocal(args.config);
    try {
      let owner: number | null = null;
      if (args.username) {
        const u = ctx.userRepo.byUsername(args.username);
        if (!u) throw new CliError(`no user named ${args.username}`);
        owner = u.id;
      }
      printRows(ctx.apiKeys.list(owner), args.output, [
        "id",
        "name",
        "username",
        "prefix",
        "created_at",
        "expires_at",
        "last_used_at",
      ]);
    } finally {
      ctx.db.close();
    }
  },
});

const revoke = defineCommand({
  meta: { name: "revoke", description: "Revoke an API key" },
  args: { ...configArg, id: { type: "string", description: "key id (from apikey list)", required: true } },
  run({ args }) {
    const ctx = openLocal(args.config);
    try {
      if (!/^\d+$/.test(args.id)) throw new CliError("--id must be a key id");
      try {
        ctx.apiKeys.revoke(Number(args.id), { id: 0, mayRevokeAny: true }, cliActor());
      } catch (e) {
        if ((e as { status?: number }).status === 404) throw new CliError(`no API key with id ${args.id}`);
        cliMessage(e);
      }
      process.stdout.write(`revoked API key ${args.id}\n`);
    } finally {
      ctx.db.close();
    }
  },
});

export default defineCommand({
  meta: { name: "apikey", description: "Manage API keys (on the server host)" },
  subCommands: { create, list, revoke },
});
