/**
 * Synthetic activity log for the benchmark: N entries with a production-like shape, written through raw prepared
 * statements in large transactions. The schema's indexes are dropped while seeding and rebuilt from their own
 * definitions afterwards (a sorted build is far faster than 1M random index inserts); the result is the real schema.
 *
 * Shape: ~50 apps with Zipf-skewed traffic, a few hundred users (a few do most of the work), categories skewed
 * (deploy, lifecycle, compose common; alert, webhook, registry rare), auth/system/webhook/registry entries without an
 * app, created_at ascending with id over the last 400 days, before/after snapshots on config changes (~30%).
 */
import type { Database } from "bun:sqlite";
import { type Category, isSyncable } from "../../src/modules/activity/model";

/** A small deterministic PRNG (mulberry32) so every run seeds the same log. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Draw an index from cumulative weights. */
function draw(cum: Float64Array, r: number): number {
  const x = r * cum[cum.length - 1];
  let lo = 0;
  let hi = cum.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cum[mid] > x) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

function cumulative(weights: readonly number[]): Float64Array {
  const out = new Float64Array(weights.length);
  let s = 0;
  weights.forEach((w, i) => {
    out[i] = s += w;
  });
  return out;
}

const zipf = (n: number, s: number) => cumulative(Array.from({ length: n }, (_, i) => 1 / (i + 1) ** s));

const APP_NAMES = [
  "shop",
  "api",
  "web",
  "worker",
  "blog",
  "grafana",
  "auth",
  "billing",
  "search",
  "docs",
  "status",
  "n8n",
  "plausible",
  "umami",
  "metabase",
  "gitea",
  "minio",
  "redis-cache",
  "mailer",
  "cron",
  "wiki",
  "chat",
  "forum",
  "cms",
  "landing",
  "admin",
  "reports",
  "etl",
  "ml-api",
  "uploader",
  "thumbnails",
  "queue",
  "notifier",
  "geo",
  "pdf",
  "invoices",
  "crm",
  "helpdesk",
  "vault-ui",
  "nextcloud",
  "jellyfin",
  "paperless",
  "vaultwarden",
  "uptime",
  "loki",
  "tempo",
  "staging-web",
  "staging-api",
  "preview",
  "sandbox",
];
const FIRST_NAMES = [
  "alice",
  "bob",
  "carol",
  "dave",
  "erin",
  "frank",
  "grace",
  "heidi",
  "ivan",
  "judy",
  "mallory",
  "niaj",
  "olivia",
  "peggy",
  "rupert",
  "sybil",
  "trent",
  "victor",
  "walter",
  "yuki",
  "zoe",
  "amir",
  "bea",
  "chen",
  "dmitri",
  "elena",
  "farid",
  "gita",
  "hugo",
  "ines",
];
const SERVICES = ["web", "api", "worker", "db", "redis", "proxy", "cron", "migrate"];

/** Category mix in percent of all entries. */
const CATEGORY_WEIGHTS: Record<Category, number> = {
  deploy: 28,
  lifecycle: 20,
  compose: 18,
  auth: 12,
  endpoint: 6,
  system: 5,
  backup: 4,
  access: 3,
  alert: 2,
  webhook: 1.2,
  registry: 0.8,
};
const CATEGORY_LIST = Object.keys(CATEGORY_WEIGHTS) as Category[];
const CATEGORY_CUM = cumulative(Object.values(CATEGORY_WEIGHTS));
/** Categories recorded without an app. */
const GLOBAL: ReadonlySet<Category> = new Set(["auth", "system", "webhook", "registry"]);

/** The apps and users the log talks about; apps and users are ordered busiest first. */
export interface World {
  apps: string[];
  users: { id: number; name: string }[];
}

/** The fixed cast of apps and users. */
export function world(userCount = 300): World {
  const users = Array.from({ length: userCount }, (_, i) => {
    const round = Math.floor(i / FIRST_NAMES.length);
    return { id: i + 1, name: `${FIRST_NAMES[i % FIRST_NAMES.length]}${round ? round + 1 : ""}` };
  });
  return { apps: [...APP_NAMES], users };
}

/** One generated entry, in the column order of INSERT_SQL. */
type Row = [
  app_slug: string | null,
  actor_user_id: number | null,
  actor_name: string,
  actor_source: string,
  ip: string | null,
  category: string,
  action: string,
  target: string | null,
  summary: string,
  error: string | null,
  compose_version_id: number | null,
  sync_status: string | null,
  sync_commit_sha: string | null,
  sync_error: string | null,
  before_json: string | null,
  after_json: string | null,
  created_at: string,
];

const INSERT_SQL = `INSERT INTO activity (app_slug, actor_user_id, actor_name, actor_source, ip, category, action, target,
  summary, error, compose_version_id, sync_status, sync_commit_sha, sync_error, before_json, after_json, created_at)
  VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`;

/** What a category generator fills in. */
interface Event {
  action: string;
  target: string | null;
  summary: string;
  error?: string;
  composeVersionId?: number;
  before?: unknown;
  after?: unknown;
}

interface Draw {
  r: () => number;
  app: string | null;
  actor: string;
  seq: number;
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
const hex = (r: () => number, n: number) => Array.from({ length: n }, () => Math.floor(r() * 16).toString(16)).join("");
const image = (d: Draw) =>
  `ghcr.io/acme/${d.app}-${pick(d.r, SERVICES)}:v${1 + Math.floor(d.r() * 9)}.${d.seq % 40}.${d.seq % 7}`;
const env = (d: Draw) => ({
  NODE_ENV: "production",
  LOG_LEVEL: pick(d.r, ["info", "debug", "warn"]),
  DATABASE_URL: "postgres://app:[redacted]@db:5432/app",
  WORKERS: String(1 + Math.floor(d.r() * 8)),
});

/** Per-category event generators. */
const EVENTS: Record<Category, (d: Draw) => Event> = {
  deploy: (d) => {
    const x = d.r();
    const v = 1 + (d.seq % 500);
    if (x < 0.85)
      return {
        action: "deploy_succeeded",
        target: d.app,
        summary: `${d.actor} deployed ${d.app} (version ${v})`,
        composeVersionId: d.seq,
      };
    if (x < 0.97)
      return {
        action: "deploy_failed",
        target: d.app,
        summary: `Deploy of ${d.app} (version ${v}) failed`,
        error: `service ${pick(d.r, SERVICES)}: pull access denied or manifest unknown for ${image(d)}; health check timed out after 60s`,
        composeVersionId: d.seq,
      };
    return {
      action: "rolled_back",
      target: d.app,
      summary: `${d.actor} rolled ${d.app} back to version ${v - 1}`,
      composeVersionId: d.seq,
    };
  },
  lifecycle: (d) => {
    const action = pick(d.r, ["started", "stopped", "restarted", "restarted", "scaled", "created", "removed"]);
    if (action === "scaled") {
      const svc = pick(d.r, SERVICES);
      const n = 1 + Math.floor(d.r() * 6);
      return {
        action,
        target: svc,
        summary: `${d.actor} scaled ${svc} of ${d.app} to ${n}`,
        before: { service: svc, replicas: n > 1 ? n - 1 : 2 },
        after: { service: svc, replicas: n },
      };
    }
    return { action, target: d.app, summary: `${d.actor} ${action} ${d.app}` };
  },
  compose: (d) => {
    const svc = pick(d.r, SERVICES);
    const x = d.r();
    if (x < 0.45)
      return { action: "compose_synced", target: d.app, summary: `${d.actor} updated the compose file of ${d.app} (${svc})` };
    if (x < 0.7)
      return {
        action: "image_changed",
        target: svc,
        summary: `${d.actor} changed the image of ${svc} in ${d.app}`,
        before: { service: svc, image: image(d) },
        after: { service: svc, image: image(d) },
      };
    if (x < 0.85)
      return {
        action: "env_changed",
        target: svc,
        summary: `${d.actor} changed 2 environment variables of ${svc} in ${d.app}`,
        before: { service: svc, environment: env(d) },
        after: { service: svc, environment: env(d) },
      };
    if (x < 0.93)
      return {
        action: "service_added",
        target: svc,
        summary: `${d.actor} added service ${svc} to ${d.app}`,
        after: { service: svc, image: image(d), ports: ["8080:80"], environment: env(d) },
      };
    return {
      action: "ports_changed",
      target: svc,
      summary: `${d.actor} changed the ports of ${svc} in ${d.app}`,
      before: { ports: ["8080:80"] },
      after: { ports: ["8080:80", "9090:9090"] },
    };
  },
  endpoint: (d) => {
    const host = `${d.app}.example.com`;
    const action = pick(d.r, ["endpoint_added", "endpoint_removed", "tls_changed", "settings_changed"]);
    return {
      action,
      target: host,
      summary: `${d.actor} ${action.replace("_", " ")} ${host}`,
      before: { domain: host, port: 8080, tls: "auto" },
      after: { domain: host, port: 8080, tls: pick(d.r, ["auto", "custom", "off"]), path: "/" },
    };
  },
  backup: (d) => {
    const action = pick(d.r, ["backup_created", "backup_changed", "backup_removed"]);
    return {
      action,
      target: `${d.app}-db`,
      summary: `${d.actor} ${action.replace("backup_", "")} the backup of ${d.app}`,
      after: { strategy: pick(d.r, ["volume", "sqlite", "pg_dump"]), schedule: "0 3 * * *", keep: 7 },
    };
  },
  alert: (d) => ({
    action: pick(d.r, ["rule_created", "rule_changed", "rule_removed"]),
    target: "cpu-high",
    summary: `${d.actor} changed alert rule cpu-high of ${d.app}`,
    before: { metric: "cpu", above: 80, for: "5m" },
    after: { metric: "cpu", above: 90, for: "10m" },
  }),
  webhook: (d) => ({
    action: pick(d.r, ["webhook_created", "webhook_changed", "webhook_removed"]),
    target: "ops-slack",
    summary: `${d.actor} changed webhook ops-slack`,
    after: { url: "https://hooks.slack.com/services/[redacted]", events: ["deploy_failed", "alert"] },
  }),
  registry: (d) => ({
    action: pick(d.r, ["registry_added", "registry_removed"]),
    target: "ghcr",
    summary: `${d.actor} added registry credentials ghcr`,
    after: { name: "ghcr", host: "ghcr.io", username: "acme-bot" },
  }),
  access: (d) => {
    const who = `${pick(d.r, FIRST_NAMES)}`;
    return d.r() < 0.8
      ? {
          action: "access_granted",
          target: who,
          summary: `${d.actor} granted ${who} access to ${d.app}`,
          after: { user: who, app_slug: d.app },
        }
      : {
          action: "access_revoked",
          target: who,
          summary: `${d.actor} revoked ${who}'s access to ${d.app}`,
          before: { user: who, app_slug: d.app },
        };
  },
  auth: (d) => {
    const x = d.r();
    if (x < 0.8) return { action: "login_succeeded", target: d.actor, summary: `${d.actor} signed in` };
    if (x < 0.98)
      return { action: "login_failed", target: d.actor, summary: `Failed sign-in for ${d.actor}`, error: "invalid credentials" };
    return { action: "password_changed", target: d.actor, summary: `${d.actor} changed their password` };
  },
  system: (d) => {
    const x = d.r();
    if (x < 0.4)
      return { action: "api_key_created", target: `ci-${d.seq % 97}`, summary: `${d.actor} created API key ci-${d.seq % 97}` };
    if (x < 0.7)
      return {
        action: "user_created",
        target: pick(d.r, FIRST_NAMES),
        summary: `${d.actor} created a user`,
      };
    if (x < 0.9)
      return {
        action: "retention_changed",
        target: "audit",
        summary: `${d.actor} set audit retention to 365 days`,
        before: { retention_days: 0 },
        after: { retention_days: 365 },
      };
    return {
      action: "public_host_changed",
      target: "deck.example.com",
      summary: `${d.actor} changed the public host`,
      before: { host: "old.example.com" },
      after: { host: "deck.example.com" },
    };
  },
};

/** Who acted: a user through the UI or API, git sync, the CLI, or the background system. */
function actorOf(cat: Category, r: () => number, userCum: Float64Array, w: World) {
  const x = r();
  const user = w.users[draw(userCum, r())];
  const as = (source: string) => ({
    userId: user.id,
    name: user.name,
    source,
    ip: `10.${Math.floor(r() * 4)}.${Math.floor(r() * 255)}.${1 + Math.floor(r() * 250)}`,
  });
  if (cat === "auth") {
    if (x < 0.03)
      return { userId: null, name: pick(r, ["admin", "root", "test"]), source: "ui", ip: `203.0.113.${Math.floor(r() * 255)}` };
    return as(x < 0.85 ? "ui" : "api");
  }
  const machine = cat === "deploy" ? 0.25 : cat === "lifecycle" ? 0.3 : cat === "system" ? 0.1 : 0.08;
  if (x < machine) {
    return cat === "deploy" || cat === "compose"
      ? { userId: null, name: "git-sync", source: "git_sync", ip: null }
      : { userId: null, name: "system", source: "system", ip: null };
  }
  if (cat === "system" && x < 0.3) return { ...as("cli"), ip: null };
  return as(r() < 0.75 ? "ui" : "api");
}

function syncOf(cat: Category, action: string, r: () => number): [string | null, string | null, string | null] {
  if (!isSyncable(cat, action)) return [null, null, null];
  const x = r();
  if (x < 0.95) return ["synced", hex(r, 40), null];
  if (x < 0.98) return ["failed", null, "push rejected: non-fast-forward"];
  return ["pending", null, null];
}

/** A generator of rows `0..n-1`, created_at ascending over `days` days ending at `now`. */
function rowMaker(n: number, now: number, days: number, seed: number, w: World) {
  const r = rng(seed);
  const appCum = zipf(w.apps.length, 1.1);
  const userCum = zipf(w.users.length, 1.0);
  const start = now - days * 86_400_000;
  const step = (days * 86_400_000) / n;
  return (i: number): Row => {
    const cat = CATEGORY_LIST[draw(CATEGORY_CUM, r())];
    const app = GLOBAL.has(cat) ? null : w.apps[draw(appCum, r())];
    const actor = actorOf(cat, r, userCum, w);
    const ev = EVENTS[cat]({ r, app, actor: actor.name, seq: i });
    const [sync, sha, syncErr] = syncOf(cat, ev.action, r);
    const at = new Date(Math.floor(start + i * step + r() * step * 0.9)).toISOString();
    const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));
    return [
      app,
      actor.userId,
      actor.name,
      actor.source,
      actor.ip,
      cat,
      ev.action,
      ev.target,
      ev.summary,
      ev.error ?? null,
      ev.composeVersionId ?? null,
      sync,
      sha,
      syncErr,
      json(ev.before),
      json(ev.after),
      at,
    ];
  };
}

/** What seeding produced. */
export interface SeedReport {
  rows: number;
  insertMs: number;
  indexMs: number;
  withSnapshots: number;
  perCategory: Map<string, number>;
}

/** Drop the activity indexes, returning their CREATE statements. */
function dropIndexes(sqlite: Database): string[] {
  const idx = sqlite
    .query<{ name: string; sql: string }, []>(
      "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'activity' AND sql IS NOT NULL",
    )
    .all();
  for (const i of idx) sqlite.run(`DROP INDEX "${i.name}"`);
  return idx.map((i) => i.sql);
}

/** Insert `n` entries ending at `now`, rebuild the indexes, and checkpoint the WAL. */
export function seedActivity(
  sqlite: Database,
  opts: { n: number; now: number; days: number; seed: number; w: World },
): SeedReport {
  const defaultCache = sqlite.query<{ cache_size: number }, []>("PRAGMA cache_size").get()!.cache_size;
  sqlite.run("PRAGMA cache_size = -262144");
  const indexSql = dropIndexes(sqlite);
  const insert = sqlite.prepare<unknown, Row>(INSERT_SQL);
  const make = rowMaker(opts.n, opts.now, opts.days, opts.seed, opts.w);
  const perCategory = new Map<string, number>();
  let withSnapshots = 0;
  const t0 = performance.now();
  const BATCH = 50_000;
  for (let from = 0; from < opts.n; from += BATCH) {
    sqlite.transaction(() => {
      for (let i = from; i < Math.min(opts.n, from + BATCH); i++) {
        const row = make(i);
        perCategory.set(row[5], (perCategory.get(row[5]) ?? 0) + 1);
        if (row[14] !== null || row[15] !== null) withSnapshots++;
        insert.run(...row);
      }
    })();
  }
  const t1 = performance.now();
  for (const sql of indexSql) sqlite.run(sql);
  sqlite.run("PRAGMA wal_checkpoint(TRUNCATE)");
  sqlite.run(`PRAGMA cache_size = ${defaultCache}`);
  return { rows: opts.n, insertMs: t1 - t0, indexMs: performance.now() - t1, withSnapshots, perCategory };
}
