/**
 * An in-process Sundeck on a real port with a real SQLite file in a temp dir: the unit of API tests.
 * `users` creates accounts through the service and returns logged-in clients.
 */
import { join } from "node:path";
import { type Config, defaults, validateConfig } from "../../src/config/schema";
import { type ContextOptions, type Ctx, createContext } from "../../src/context";
import { LogSink } from "../../src/log/logger";
import type { Role } from "../../src/modules/auth/policy";
import { createSessions } from "../../src/modules/auth/sessions";
import { type RunningServer, startServer } from "../../src/server";
import { Client } from "./http";
import { tempDir } from "./tmp";

export const PASSWORD = "correct-horse-battery";

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? (T[K] extends unknown[] ? T[K] : DeepPartial<T[K]>) : T[K] };

/** A valid test config in a temp dir: TLS off, ephemeral port, generous API rate limit. */
export function testConfig(over: DeepPartial<Config> = {}): Config {
  const dir = tempDir();
  const base = defaults();
  const cfg: Config = {
    ...base,
    data_dir: join(dir, "data"),
    apps_dir: join(dir, "apps"),
    listen_addr: "127.0.0.1:0",
    management_port: 0,
    master_secret: "test-master-secret-0123456789abcdef",
    tls: { ...base.tls, mode: "off", email: "" },
    ratelimit: { requests: 100_000, window: "60s", burst: 100_000, by: "ip" },
  };
  for (const [k, v] of Object.entries(over)) {
    const cur = (cfg as any)[k];
    (cfg as any)[k] = cur && typeof cur === "object" && !Array.isArray(cur) ? { ...cur, ...(v as object) } : v;
  }
  validateConfig(cfg);
  return cfg;
}

export interface TestServer {
  ctx: Ctx;
  url: string;
  server: RunningServer;
  /** A fresh anonymous client (a new one on each access, so no cookie is ever kept). */
  readonly anon: Client;
  /** The super-admin created at start ("root"). */
  root: Client;
  /** Create a user with `role` (and grants) and return a logged-in client. */
  user(username: string, role: Role, grants?: string[]): Promise<Client & { id: number }>;
  /** Create an API key for an existing user and return a client using it. */
  keyFor(username: string, name?: string, expiresAt?: string | null): Client & { key: string; keyId: number };
  stop(): Promise<void>;
}

/** Start a server with a super-admin `root` already set up. */
export async function startTestServer(over: DeepPartial<Config> = {}, opts: ContextOptions = {}): Promise<TestServer> {
  const config = testConfig(over);
  const logs = opts.logs ?? new LogSink({ stdout: false });
  const ctx = createContext(config, { ...opts, logs });
  const server = await startServer(ctx);
  const url = server.url;
  let setup = await new Client(url).post("/api/setup", { username: "root", password: PASSWORD });
  // a server started again over the data of an earlier one (a restart): root signs in instead
  if (setup.status === 409) setup = await new Client(url).post("/api/auth/login", { username: "root", password: PASSWORD });
  if (setup.status !== 201 && setup.status !== 200) throw new Error(`setup failed: ${setup.status} ${setup.text}`);
  const root = new Client(url, { cookie: setup.headers.get("set-cookie")!.match(/session=([^;]+)/)![1] });
  const actor = { userId: null, name: "test", source: "cli" as const, ip: null };
  const sessions = createSessions(ctx.keys.session);

  return {
    ctx,
    url,
    server,
    get anon() {
      return new Client(url);
    },
    root,
    async user(username, role, grants = []) {
      const u = await ctx.users.create({ username, password: PASSWORD, role }, actor);
      for (const g of grants) ctx.users.grant(u.id, g, actor);
      // a session made directly, so helpers do not spend the login route's per-IP allowance
      const c = new Client(url, { cookie: await sessions.sign(u.id, u.tokenVersion) }) as Client & { id: number };
      c.id = u.id;
      return c;
    },
    keyFor(username, name = "test key", expiresAt = null) {
      const u = ctx.userRepo.byUsername(username)!;
      const k = ctx.apiKeys.create(u, name, expiresAt, actor);
      const c = new Client(url, { bearer: k.key }) as Client & { key: string; keyId: number };
      c.key = k.key;
      c.keyId = k.id;
      return c;
    },
    stop: () => server.stop(),
  };
}
