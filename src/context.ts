/**
 * The composition root: builds every long-lived service once, with explicit dependencies. The server, the CLI and
 * the tests all start here; nothing else constructs services.
 */
import { join } from "node:path";
import type { Config } from "./config/schema";
import { type Db, openDb } from "./db";
import { createDockerLayer, type DockerLayer } from "./docker";
import { createEdge, type Edge } from "./edge";
import { WS_TIMINGS, WsHub, type WsTimings } from "./http/ws";
import { createSecrets, deriveKeys, type Keys, randomHex, type Secrets } from "./lib/crypto";
import { createIdleCollector } from "./lib/idle-collect";
import { CidrSet } from "./lib/net";
import { type Clock, iso, systemClock } from "./lib/time";
import { type Log, LogSink } from "./log/logger";
import { type Activity, createActivity } from "./modules/activity/service";
import type { Alerts } from "./modules/alerts/service";
import { wireAlerts } from "./modules/alerts/wire";
import { type ApiKeys, createApiKeys } from "./modules/apikeys/service";
import { type AppFilesStore, createAppFiles } from "./modules/apps/files";
import { type AppRepo, createAppRepo } from "./modules/apps/repo";
import { StatusBoard } from "./modules/apps/status";
import { type AppViews, createAppViews } from "./modules/apps/view";
import { createLoginGuard, type LoginGuard } from "./modules/auth/lockout";
import { type Auth, createAuth } from "./modules/auth/service";
import { createSessions } from "./modules/auth/sessions";
import type { Backups } from "./modules/backups/service";
import { type BackupWiring, wireBackups } from "./modules/backups/wire";
import { DeployOutput } from "./modules/deploys/output";
import { createDeployRepo, type DeployRepo } from "./modules/deploys/repo";
import { createRollouts } from "./modules/deploys/rollout";
import { createDeployer, type Deployer } from "./modules/deploys/service";
import { createSubnetPool } from "./modules/deploys/subnets";
import { createGitSync, type GitSync, type GitSyncOptions } from "./modules/gitsync/service";
import { createLogHub, type LogHub } from "./modules/logs/hub";
import { RequestStats } from "./modules/metrics/aggregator";
import { createCollector } from "./modules/metrics/collect";
import { createRequestStatsStore, parseTiers, type RequestStatsStore } from "./modules/metrics/request-stats";
import { createMetricsService, type MetricsService } from "./modules/metrics/service";
import { createRegistries, type Registries } from "./modules/registries/service";
import { createSettings, type Settings } from "./modules/system/settings";
import { createUserRepo, type UserRepo } from "./modules/users/repo";
import { createUsers, type Users } from "./modules/users/service";
import type { DispatchTuning } from "./modules/webhooks/dispatch";
import { createWebhooks, type Webhooks } from "./modules/webhooks/service";
import { TrafficPins } from "./proxy/pins";
import { createReconciler, type Reconciler } from "./reconciler";

/** Everything a route, job or command needs. */
export interface Ctx {
  config: Readonly<Config>;
  /** The config file read, or null for the embedded default. */
  configSource: string | null;
  clock: Clock;
  logs: LogSink;
  log: Log;
  db: Db;
  keys: Keys;
  /** AES-256-GCM sealing of stored credentials under the key derived once from master_secret. */
  secrets: Secrets;
  trusted: CidrSet;
  /** Random per process: Sundeck's own proxy sends it to the management server, which then believes X-Forwarded-*. */
  proxyToken: string;
  settings: Settings;
  activity: Activity;
  userRepo: UserRepo;
  users: Users;
  apiKeys: ApiKeys;
  guard: LoginGuard;
  auth: Auth;
  ws: WsHub;
  registries: Registries;
  /** Alert webhook destinations and the SSRF-safe dispatcher (`notify`, `test`). */
  webhooks: Webhooks;
  /** The engine and compose, detected at server start (`detect`); never detected for CLI commands. */
  docker: DockerLayer;
  appRepo: AppRepo;
  deployRepo: DeployRepo;
  appFiles: AppFilesStore;
  appViews: AppViews;
  deployOutput: DeployOutput;
  deployer: Deployer;
  /** Container logs: one engine follow per container, shared by every stream. */
  logHub: LogHub;
  status: StatusBoard;
  reconciler: Reconciler;
  /** Request statistics per metrics tier: the proxy counts requests in memory, the edge flushes them here. */
  requestStats: RequestStatsStore;
  /** Container and host metrics: collected every 10 s, rolled up into the metrics tiers, pruned, queried by range. */
  metrics: MetricsService;
  /** The reverse proxy wired to the apps, built complete; the server starts and stops it. */
  edge: Edge;
  /** Alert rules, their history, and the evaluator (started by the server); `raise` for event kinds such as backups. */
  alerts: Alerts;
  /** Backup configs, runs (scheduled, missed, now), downloads and restores; the server starts and stops its work. */
  backups: Backups;
  /** Git sync: the configuration in force, the status, the worker (started by the server) and its triggers. */
  gitSync: GitSync;
}

export interface ContextOptions {
  configSource?: string | null;
  clock?: Clock;
  logs?: LogSink;
  /** Override the database path (tests); default `<data_dir>/sundeck.db`. */
  dbPath?: string;
  wsTimings?: WsTimings;
  /** Deploy and reconcile timings (tests shorten them). */
  timings?: {
    stabilizeMs?: number;
    settleMs?: number;
    reconcileEveryMs?: number;
    reconcileDebounceMs?: number;
    statusEveryMs?: number;
    /** Metrics collection interval (10 s); 0 turns the timer off (tests call ctx.metrics.tick()). */
    metricsEveryMs?: number;
  };
  /** Webhook delivery: resolver, timeouts, retry delays, queue (tests shorten or replace them). */
  webhooks?: DispatchTuning;
  /** Backups: a strategy or the containers replaced (tests of what surrounds them). */
  backups?: BackupWiring["override"];
  /** Git sync timings (tests shorten the push debounce). */
  gitSync?: GitSyncOptions;
}

/** The database file inside the data dir. */
export function dbPathOf(config: Pick<Config, "data_dir">): string {
  return join(config.data_dir, "sundeck.db");
}

/** Build the context. Opens (and migrates) the database. */
export function createContext(config: Readonly<Config>, opts: ContextOptions = {}): Ctx {
  const clock = opts.clock ?? systemClock;
  const logs = opts.logs ?? new LogSink();
  const log = logs.logger("core");
  const db = openDb(opts.dbPath ?? dbPathOf(config));
  const keys = deriveKeys(config.master_secret);
  // git sync is built last (it reads every service); activity asks it through these late-bound calls
  let gitSync: GitSync | undefined;
  const activity = createActivity({
    db,
    clock,
    log: logs.logger("activity"),
    gitSyncEnabled: () => gitSync?.enabled() ?? false,
    onPending: () => gitSync?.changed(),
  });
  const userRepo = createUserRepo(db.orm);
  const users = createUsers({ db, clock, repo: userRepo, activity });
  const apiKeys = createApiKeys({ db, clock, hmacKey: keys.apiKey, activity });
  const guard = createLoginGuard(db, clock);
  const auth = createAuth({
    db,
    clock,
    log: logs.logger("auth"),
    users: userRepo,
    apiKeys,
    sessions: createSessions(keys.session),
    guard,
    activity,
  });
  const settings = createSettings(db, clock, { auditRetentionDays: config.audit_retention_days, publicHost: config.public_host });
  const ws = new WsHub({ clock, log: logs.logger("ws"), recheck: (p) => auth.recheck(p) }, opts.wsTimings ?? WS_TIMINGS, {
    maxOpen: config.streams.max_open,
    maxPerUser: config.streams.max_per_user,
    maxBuffered: config.streams.max_buffered_mib * 1024 * 1024,
  });
  const secrets = createSecrets(keys.encryption);
  const registries = createRegistries({ db, clock, secrets, activity });
  const webhooks = createWebhooks({
    db,
    clock,
    secrets,
    activity,
    log: logs.logger("webhooks"),
    allowPrivate: config.webhooks.allow_private_destinations,
    tuning: opts.webhooks,
  });
  // compose detection keeps its answer in the data dir, so a start with the same binaries spawns nothing
  const docker = createDockerLayer(logs.logger("docker"), { cacheDir: config.data_dir });
  const appRepo = createAppRepo(db);
  const deployRepo = createDeployRepo(db);
  const appFiles = createAppFiles(config.apps_dir, config.data_dir);
  // one full collection once a batch of deploys has ended (left to the engine, a burst's garbage stays resident),
  // and the code compiled for it dropped, at most every 10 minutes
  const afterDeploys = createIdleCollector({ idle: () => deployOutput.inFlight() === 0, shrink: {} });
  const deployOutput = new DeployOutput(
    () => clock.now(),
    () => afterDeploys.poke(),
  );
  const t = opts.timings ?? {};
  const subnets = createSubnetPool({
    db,
    pool: config.docker.subnet_pool,
    prefix: config.docker.subnet_prefix,
    now: () => iso(clock.now()),
  });
  // rolling deploys: which containers take traffic (read by the proxy), and the rollouts journal
  const pins = new TrafficPins();
  const rollouts = createRollouts({
    db,
    log: logs.logger("deploy"),
    now: () => iso(clock.now()),
    pins,
    traffic: () =>
      edge.listeners()
        ? {
            busy: edge.upstreamBusy,
            dropIdle: edge.dropIdle,
            closeTunnels: edge.closeTunnels,
            settled: edge.routesSettled,
          }
        : null,
    refreshBoard: (slug) => status.refreshApp(slug),
  });
  const deployer = createDeployer({
    db,
    clock,
    log: logs.logger("deploy"),
    activity,
    apps: appRepo,
    repo: deployRepo,
    files: appFiles,
    docker,
    registries,
    secrets,
    output: deployOutput,
    appsDir: config.apps_dir,
    dataDir: config.data_dir,
    allowedHostPaths: config.compose.allowed_host_paths,
    globalRegistries: config.registries,
    subnets,
    rollouts,
    stabilizeMs: t.stabilizeMs,
    settleMs: t.settleMs,
  });
  const status = new StatusBoard(() => docker.engine, logs.logger("status"), { everyMs: t.statusEveryMs });
  const appViews = createAppViews({
    repo: appRepo,
    journal: deployRepo,
    files: appFiles,
    status,
    secrets,
    busy: (slug) => deployer.busy(slug),
    prepare: (slug, compose, env) => deployer.validate(slug, compose, env),
  });
  const logHub = createLogHub({ engine: () => docker.engine, log: logs.logger("logs"), now: () => clock.now() });
  const reconciler = createReconciler({
    files: appFiles,
    repo: appRepo,
    journal: deployRepo,
    deployer,
    status,
    log: logs.logger("reconcile"),
    everyMs: t.reconcileEveryMs,
    debounceMs: t.reconcileDebounceMs,
  });
  const requestStats = createRequestStatsStore({ db, clock, log: logs.logger("stats"), tiers: parseTiers(config.metrics.tiers) });
  const metrics = createMetricsService({
    db,
    clock,
    log: logs.logger("metrics"),
    tiers: parseTiers(config.metrics.tiers),
    // the engine is read at each tick: it is set once the server has detected Docker (never for CLI commands)
    collector: createCollector({
      engine: () => docker.engine,
      dataDir: config.data_dir,
      log: logs.logger("collect"),
      now: () => clock.now(),
    }),
    everyMs: t.metricsEveryMs,
  });
  const trusted = new CidrSet(config.trusted_proxies);
  const proxyToken = randomHex(24);
  const edge = createEdge({
    config,
    logs,
    clock,
    trusted,
    proxyToken,
    apps: appRepo,
    views: appViews,
    status,
    stats: new RequestStats({ clock }),
    statsStore: requestStats,
    pins,
  });
  const alerts = wireAlerts({
    db,
    clock,
    log: logs.logger("alerts"),
    activity,
    userRepo,
    appRepo,
    appViews,
    status,
    busy: (slug) => deployer.busy(slug),
    requestStats,
    certInfo: () => {
      const cm = edge.certs();
      return cm ? (host) => cm.certInfo(host) : null;
    },
    reader: metrics,
    notifier: webhooks,
  });
  const backups = wireBackups({
    config,
    db,
    clock,
    logs,
    secrets,
    activity,
    alerts,
    docker,
    appRepo,
    appViews,
    lock: (slug) => deployer.locks.acquire(slug),
    project: (slug) => {
      const app = appRepo.bySlug(slug);
      const id = app?.currentVersionId ?? app?.attemptedVersionId;
      const v = id ? deployRepo.version(id) : undefined;
      const src = v ? { compose: v.compose, env: secrets.open(v.envSealed) } : appFiles.read(slug);
      try {
        return app && src ? deployer.validate(slug, src.compose, src.env).project : null;
      } catch {
        return null;
      }
    },
    override: opts.backups,
  });
  const ctx: Omit<Ctx, "gitSync"> = {
    config,
    configSource: opts.configSource ?? null,
    clock,
    logs,
    log,
    db,
    keys,
    secrets,
    trusted,
    proxyToken,
    settings,
    activity,
    userRepo,
    users,
    apiKeys,
    guard,
    auth,
    ws,
    registries,
    webhooks,
    docker,
    appRepo,
    deployRepo,
    appFiles,
    appViews,
    deployOutput,
    deployer,
    logHub,
    status,
    reconciler,
    requestStats,
    metrics,
    edge,
    alerts,
    backups,
  };
  const full = ctx as Ctx;
  gitSync = full.gitSync = createGitSync(full, opts.gitSync);
  return full;
}
