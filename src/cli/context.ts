/** `sundeck context`: the servers the remote commands talk to (client.yaml, 0600); keys are never printed in full. */
import { defineCommand } from "citty";
import {
  CONTEXT_NAME,
  checkApiKey,
  checkUrl,
  clientConfigPath,
  loadClientConfig,
  maskKey,
  saveClientConfig,
  unknownContext,
} from "../client/config";
import { outputFormat, printJson, printTable } from "../client/output";
import { CliError } from "./errors";
import { UsageError } from "./exit";
import { outputArg } from "./remote";

const nameArg = { name: { type: "positional", description: "context name", required: true, valueHint: "name" } } as const;

const checkName = (name: string) => {
  if (!CONTEXT_NAME.test(name)) throw new UsageError("a context name is letters, digits, dots, dashes and underscores");
  return name;
};

const add = defineCommand({
  meta: { name: "add", description: "Add a server (the first one added becomes current)" },
  args: {
    ...nameArg,
    url: { type: "string", description: "server URL, e.g. https://deploy.example.com", required: true, valueHint: "url" },
    "api-key": { type: "string", description: "API key (sd_…)", required: true, valueHint: "key" },
    force: { type: "boolean", description: "replace a context of the same name", default: false },
    use: { type: "boolean", description: "make it the current context", default: false },
  },
  run({ args }) {
    const name = checkName(args.name);
    const url = checkUrl(args.url);
    const key = checkApiKey(args["api-key"]);
    const path = clientConfigPath();
    const cfg = loadClientConfig(path);
    if (cfg.contexts[name] && !args.force) throw new CliError(`context ${name} exists; pass --force to replace it`);
    cfg.contexts[name] = { url, api_key: key };
    const current = args.use || !cfg.current_context || !cfg.contexts[cfg.current_context];
    if (current) cfg.current_context = name;
    saveClientConfig(cfg, path);
    process.stdout.write(`added context ${name} (${url})${current ? ", now current" : ""}\n`);
  },
});

const use = defineCommand({
  meta: { name: "use", description: "Make a context current" },
  args: { ...nameArg },
  run({ args }) {
    const path = clientConfigPath();
    const cfg = loadClientConfig(path);
    if (!cfg.contexts[args.name]) throw unknownContext(cfg, args.name);
    cfg.current_context = args.name;
    saveClientConfig(cfg, path);
    process.stdout.write(`current context: ${args.name} (${cfg.contexts[args.name].url})\n`);
  },
});

const list = defineCommand({
  meta: { name: "list", description: "List contexts (keys masked)" },
  args: { ...outputArg },
  run({ args }) {
    const format = outputFormat(args.output);
    const cfg = loadClientConfig();
    const rows = Object.entries(cfg.contexts)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, c]) => ({ name, url: c.url, api_key: maskKey(c.api_key), current: name === cfg.current_context }));
    if (format === "json") return printJson(rows);
    printTable(
      ["current", "name", "url", "api key"],
      rows.map((r) => [r.current ? "*" : "", r.name, r.url, r.api_key]),
    );
  },
});

const remove = defineCommand({
  meta: { name: "remove", description: "Forget a context" },
  args: { ...nameArg },
  run({ args }) {
    const path = clientConfigPath();
    const cfg = loadClientConfig(path);
    if (!cfg.contexts[args.name]) throw unknownContext(cfg, args.name);
    delete cfg.contexts[args.name];
    if (cfg.current_context === args.name) cfg.current_context = "";
    saveClientConfig(cfg, path);
    process.stdout.write(`removed context ${args.name}\n`);
  },
});

export default defineCommand({
  meta: { name: "context", description: "Manage the servers the remote commands talk to" },
  subCommands: { add, use, list, remove },
});
