/**
 * Shared plumbing of the remote commands: the flags they have in common, the API client of the chosen context, and
 * waiting on server-side work with progress (Ctrl-C leaves the work running, says how to follow or cancel it, exits 130).
 */
import { createInterface } from "node:readline";
import { Api } from "../client/api";
import { loadClientConfig, resolveTarget } from "../client/config";
import { Progress } from "../client/progress";
import { Aborted, runAndFollow } from "../client/stream";
import type { Accepted, DeployFrame, DeployRecord } from "../shared/deploys";
import { isSlug } from "../shared/slug";
import { CliError } from "./errors";
import { Interrupted, UsageError } from "./exit";

export const contextArg = {
  context: { type: "string", description: "context to use (default: the current one, or $SUNDECK_URL)", valueHint: "name" },
} as const;

export const appArg = { app: { type: "string", description: "app name (slug)", required: true, valueHint: "slug" } } as const;

export const detachArg = {
  detach: { type: "boolean", description: "return once the server has accepted the work", default: false },
} as const;

export const outputArg = {
  output: { type: "string", description: "output format: text or json", default: "text", valueHint: "text|json" },
} as const;

/** The API client of `--context`, the environment, or the current context. */
export function connect(args: { context?: string }): Api {
  return new Api(resolveTarget(loadClientConfig(), { context: args.context }));
}

/** A slug given on the command line. */
export function slugArg(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`${flag} is required`);
  if (!isSlug(value))
    throw new UsageError(`${flag} must be an app name: lowercase letters and digits separated by single dashes`);
  return value;
}

/** An app's path under /api. */
export const appPath = (slug: string, rest = "") => `/apps/${encodeURIComponent(slug)}${rest}`;

/** Run `fn` with a signal that Ctrl-C fires; the wait then ends with `message()` and exit 130. */
export async function interruptible<T>(fn: (signal: AbortSignal) => Promise<T>, message: () => string): Promise<T> {
  const ac = new AbortController();
  const onSigint = () => ac.abort();
  process.on("SIGINT", onSigint);
  try {
    return await fn(ac.signal);
  } catch (e) {
    if (e instanceof Aborted || ac.signal.aborted) throw new Interrupted(message());
    throw e;
  } finally {
    process.off("SIGINT", onSigint);
  }
}

/** What `track` was asked to do, for its messages. */
export interface Work {
  slug: string;
  /** Noun for messages: "deploy", "restart", ... */
  what: string;
  /** Status line while waiting: "deploying blog". */
  label: string;
  detach: boolean;
  /** Printed before the frames (sync prints a header per app). */
  onFrame?: (f: DeployFrame, progress: Progress) => void;
}

/**
 * Start server-side work and, unless detached, follow it to the end with progress. Resolves with the final deploy
 * record (null when the app is gone, as after remove; also null when detached); throws a CliError when it failed.
 */
export async function track(api: Api, work: Work, start: () => Promise<Accepted>): Promise<DeployRecord | null> {
  const { slug, what } = work;
  const follow = `follow it with: sundeck watch --app ${slug}; cancel it with: sundeck cancel --app ${slug}`;
  if (work.detach) {
    const a = await start();
    process.stdout.write(`${what} of ${slug} accepted (deploy ${a.deploy_id}); ${follow}\n`);
    return null;
  }
  const progress = new Progress();
  let started = false;
  progress.start(work.label);
  try {
    const r = await interruptible(
      (signal) =>
        runAndFollow(
          api,
          slug,
          async () => {
            const a = await start();
            started = true;
            return a;
          },
          (f) => (work.onFrame ? work.onFrame(f, progress) : progress.frame(f)),
          signal,
        ),
      () =>
        started
          ? `interrupted: the ${what} of ${slug} goes on on the server; ${follow}`
          : `interrupted: nothing was sent to the server`,
    );
    return outcome(work, r.deploy);
  } finally {
    progress.stop();
  }
}

/** The deploy record as the command's result: failures become one-line errors. */
export function outcome(work: Pick<Work, "slug" | "what">, d: DeployRecord | null): DeployRecord | null {
  if (!d || d.status === "succeeded") return d;
  const head = `${work.what} of ${work.slug}`;
  if (d.status === "cancelled") throw new CliError(`${head} was cancelled`);
  if (d.status === "interrupted") throw new CliError(`${head} was interrupted: ${d.error ?? "the server stopped"}`);
  throw new CliError(`${head} failed: ${d.error ?? "no reason given"}`);
}

/** Ask a yes/no question on the terminal; false unless the answer starts with y. */
export async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await new Promise<string>((resolve) => {
      rl.question(`${question} [y/N] `, resolve);
      rl.on("close", () => resolve(""));
    });
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
