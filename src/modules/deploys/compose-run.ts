/**
 * Running compose for an app: render the checked file Sundeck runs, pull what is missing with the app's registry
 * credentials, `up`, and wait until the containers are running and stable. No journal and no activity here.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { healthWindow } from "../../compose/health-window";
import { pooledNetworks } from "../../compose/pooled-networks";
import { expectation, type Prepared, prepare } from "../../compose/prepare";
import { REV_LABEL, renderCompose } from "../../compose/rewrite";
import { chooseStrategy } from "../../compose/rollout-labels";
import { PUBLIC_NETWORK, projectName } from "../../docker/naming";
import { sweepProject } from "../../docker/sweep";
import type { ContainerSummary, DockerHandle, Engine, ProjectRef, RunResult } from "../../docker/types";
import type { Secrets } from "../../lib/crypto";
import { HttpError } from "../../lib/errors";
import { writeFileAtomic } from "../../lib/fs";
import type { AppFilesStore } from "../apps/files";
import { type AppRow, appScale } from "../apps/repo";
import type { Registries } from "../registries/service";
import { imageRegistry } from "../registries/service";
import type { RunCtx } from "./operations";
import type { DeployFrame } from "./output";
import type { DeployRepo } from "./repo";
import { type Rollouts, type RollTarget, servicePorts } from "./rollout";
import { waitStable } from "./stabilize";
import { type SubnetPool, SubnetPoolExhausted } from "./subnets";

export interface ComposeRunDeps {
  docker: DockerHandle;
  files: AppFilesStore;
  journal: DeployRepo;
  registries: Registries;
  secrets: Secrets;
  appsDir: string;
  dataDir: string;
  /** `compose.allowed_host_paths` of the server config. */
  allowedHostPaths: string[];
  /** Registry names applied to every app (config `registries`). */
  globalRegistries: readonly string[];
  /** Subnets for app networks from `docker.subnet_pool` (absent: Docker's own pools). */
  subnets?: SubnetPool;
  /** Rolling replacement of routed services (absent: compose's recreate for every service). */
  rollouts?: Rollouts;
  /** Stabilisation window after `up`. */
  stabilizeMs?: number;
  settleMs?: number;
}

/** Raised when Docker is missing; routes answer 503 with the reason. */
export class DockerDown extends HttpError {
  constructor(readonly problem: string) {
    super(503, problem);
  }
}

/** Build the compose runner. */
export function createComposeRun(d: ComposeRunDeps) {
  const policy = (slug: string) => ({
    appDir: d.files.dir(slug),
    appsDir: d.appsDir,
    dataDir: d.dataDir,
    allowedHostPaths: d.allowedHostPaths,
  });
  const runDir = (slug: string) => join(d.dataDir, "run", slug);
  const renderedPath = (slug: string) => join(runDir(slug), "docker-compose.yml");
  const emptyEnvPath = (slug: string) => join(runDir(slug), "empty.env");

  /** The engine and compose, or a 503 naming what is missing. */
  const docker = () => {
    const { engine, compose, problem } = d.docker;
    if (!engine || !compose) throw new DockerDown(problem ?? "docker is not available");
    return { engine, compose };
  };

  /**
   * The file Sundeck runs: the prepared render, with the app networks' subnets from the pool (`assigned`, else the
   * blocks recorded for the app: a start or restart names the same subnets its deploy did) and each service's rev.
   */
  const withSubnets = (slug: string, p: Prepared, assigned?: Record<string, string>): string => {
    const pool = d.subnets;
    const subnets = pool?.enabled ? (assigned ?? pool.recorded(slug, pooledNetworks(p.project, projectName(slug)))) : {};
    // every service stamped with its rev: a rolling deploy tells a changed service from one left as it runs
    return renderCompose(p.project, { routed: p.routed, publicNetwork: PUBLIC_NETWORK, subnets, revs: true });
  };

  /** Blocks of the pool for the app's networks that are not there yet (one engine call lists what exists). */
  const assignSubnets = async (engine: Engine, slug: string, p: Prepared): Promise<Record<string, string>> => {
    const pool = d.subnets;
    if (!pool?.enabled) return {};
    const wanted = pooledNetworks(p.project, projectName(slug));
    if (!wanted.length) return {};
    return pool.assign(slug, wanted, await engine.networks({ labels: [] }));
  };

  /** Make the rendered file and the empty env file compose runs with. */
  const writeRendered = (slug: string, rendered: string) => {
    mkdirSync(runDir(slug), { recursive: true, mode: 0o700 });
    writeFileAtomic(renderedPath(slug), rendered, 0o600);
    writeFileAtomic(emptyEnvPath(slug), "", 0o600);
  };

  const refFor = (slug: string, extraEnv: Record<string, string> = {}): ProjectRef => ({
    name: projectName(slug),
    file: renderedPath(slug),
    // a removed app directory can still be taken down: `down` resolves no paths, so the run dir stands in
    projectDir: existsSync(d.files.dir(slug)) ? d.files.dir(slug) : runDir(slug),
    envFile: emptyEnvPath(slug),
    env: extraEnv,
  });

  const pipe = (rc: RunCtx, action: DeployFrame["action"]) => ({
    onLine: (text: string) => rc.line(action, text),
    signal: rc.signal,
  });

  /** Registry names that apply to an app: the global list plus its label (or none with `none`). */
  const registriesFor = (p: Prepared) => (p.labels.registries === null ? [...d.globalRegistries] : p.labels.registries);

  /** Pull what is missing (or everything), with a throwaway docker config holding the app's registry credentials. */
  const pullImages = async (rc: RunCtx, slug: string, p: Prepared, all: boolean): Promise<string | null> => {
    const { engine, compose } = docker();
    const wanted: string[] = [];
    for (const s of p.project.services) {
      if (!s.image) continue;
      const policyPull = (s.pullPolicy ?? "missing").toLowerCase();
      if (policyPull === "never" || policyPull === "build") continue;
      if (all || policyPull === "always" || !(await engine.imageExists(s.image))) wanted.push(s.name);
    }
    if (wanted.length === 0) return null;
    const names = registriesFor(p);
    const images = p.project.services.filter((s) => wanted.includes(s.name)).map((s) => s.image!);
    const cfg = d.registries.dockerConfig(names);
    rc.line("pull", `pulling ${wanted.join(", ")}${cfg ? ` (registries: ${names.join(", ")})` : ""}`);
    try {
      const r = await compose.pull(refFor(slug, cfg ? { DOCKER_CONFIG: cfg.dir } : {}), wanted, pipe(rc, "pull"));
      if (r.code === 0) return null;
      // a pull that failed is fine when the image is here anyway (a local-only image on an explicit pull)
      const missing: string[] = [];
      for (const img of images) if (!(await engine.imageExists(img))) missing.push(img);
      if (missing.length === 0 && !r.killed) {
        rc.line("pull", "pull failed; using the images present locally");
        return null;
      }
      const hosts = [...new Set(missing.map(imageRegistry))].join(", ");
      return r.killed ? "cancelled" : `${failed(r, "pull")}; missing: ${missing.join(", ")} (registry ${hosts})`;
    } finally {
      cfg?.cleanup();
    }
  };

  /**
   * How long to wait for these services to be ready: the stabilisation window, stretched to a healthcheck's declared
   * slow start (compose/health-window.ts), which the deploy log says.
   */
  const windowFor = (rc: RunCtx, p: Prepared, services: readonly string[]): number => {
    const base = d.stabilizeMs ?? 60_000;
    const w = healthWindow(p.project, base, services);
    if (w.slowest !== null)
      rc.line("up", `waiting up to ${Math.round(w.ms / 1000)}s: the healthcheck of ${w.slowest} allows a slow start`);
    return w.ms;
  };

  /** Wait until the app's containers are running (and healthy) and stay so: the error when they do not, else null. */
  const stable = async (engine: Engine, rc: RunCtx, p: Prepared, scale: Record<string, number>): Promise<string | null> => {
    const expect = expectation(p.project, scale);
    const s = await waitStable(engine, projectName(rc.app.slug), expect, {
      windowMs: windowFor(rc, p, expect.services),
      settleMs: d.settleMs,
      signal: rc.signal,
    });
    return s.ok ? null : s.error;
  };

  /** The version the app runs (or its files before any), checked; null when it has none. Writes nothing. */
  const current = (app: AppRow): Prepared | null => {
    const v = app.currentVersionId ? d.journal.version(app.currentVersionId) : null;
    const source = v ? { compose: v.compose, env: d.secrets.open(v.envSealed) } : d.files.read(app.slug);
    return source ? prepare(source.compose, source.env, policy(app.slug)) : null;
  };

  /** Re-render the version the app runs, for lifecycle actions (the rendered file may be gone with a wiped data dir). */
  const ensureRendered = (app: AppRow): Prepared | null => {
    const p = current(app);
    if (p) writeRendered(app.slug, withSubnets(app.slug, p));
    return p;
  };

  /**
   * Take the app down without checking its files again (they may be refused or broken: removal must still work):
   * `compose down` with the last version that deployed, when there is one and it still renders, then every container,
   * network (and volume, when asked) still carrying the project's label, through the Engine API. The error, or null.
   */
  const takeDown = async (rc: RunCtx, o: { volumes: boolean }): Promise<string | null> => {
    const slug = rc.app.slug;
    const { engine, compose } = docker();
    let good: Prepared | null = null;
    const v = rc.app.currentVersionId ? d.journal.version(rc.app.currentVersionId) : null;
    try {
      good = v ? prepare(v.compose, d.secrets.open(v.envSealed), policy(slug)) : null;
    } catch {
      rc.line("down", `version ${v?.version} no longer passes the checks; removing by the project's labels`);
    }
    if (good) {
      writeRendered(slug, good.rendered);
      const r = await compose.down(refFor(slug), { ...pipe(rc, "down"), volumes: o.volumes });
      if (r.killed) return "cancelled";
      if (r.code !== 0) rc.line("down", `${failed(r, "compose down")}; removing what is left through the engine`);
    }
    const swept = await sweepProject(engine, projectName(slug), {
      volumes: o.volumes,
      signal: rc.signal,
      onLine: (text) => rc.line("down", text),
    });
    if (rc.signal.aborted) return "cancelled";
    if (swept.errors.length) return `removal failed: ${swept.errors.join("; ").slice(0, 500)}`;
    // its networks are gone: the blocks go back to the pool
    d.subnets?.release(slug);
    return null;
  };

  /**
   * How each service is replaced (said in the deploy log, kept on the deploy's record): the routed services that
   * run now and changed roll when that is safe, the rest is compose's own recreate.
   */
  const planServices = async (engine: Engine, rc: RunCtx, p: Prepared, scale: Record<string, number>, rendered: string) => {
    const strategies: Record<string, { strategy: "rolling" | "recreate"; reason: string }> = {};
    const rolling: Array<{ target: RollTarget; old: ContainerSummary[] }> = [];
    const containers = d.rollouts ? await engine.containers({ project: projectName(rc.app.slug) }) : [];
    const revs = serviceRevs(rendered);
    for (const svc of p.project.services) {
      if (hasProfiles(p, svc.name)) continue;
      const choice = chooseStrategy(svc, p.routed.includes(svc.name));
      let { strategy, reason } = choice;
      // every container of the service, running or not: compose's scale counts them all
      const old = containers.filter((c) => c.service === svc.name);
      const replicas = scale[svc.name] ?? svc.replicas ?? 1;
      if (strategy === "rolling") {
        const seen = d.rollouts ? await d.rollouts.assess(engine, old, revs[svc.name] ?? "", svc.image) : null;
        if (!seen) [strategy, reason] = ["recreate", "rolling deploys are not available here"];
        else if (seen.unsafe) [strategy, reason] = ["recreate", seen.unsafe];
        else if (!old.some((c) => c.state === "running")) reason = "nothing runs yet: started as compose starts it";
        else if (replicas === 0) [strategy, reason] = ["recreate", "scaled to 0"];
        else if (seen.unchanged) reason = "unchanged: left running";
        else {
          const ports = servicePorts(p.labels.endpoints, svc.name);
          rolling.push({ target: { service: svc, replicas, ports, rev: revs[svc.name] ?? "" }, old });
        }
      }
      strategies[svc.name] = { strategy, reason };
      rc.line("up", `${svc.name}: ${strategy} (${reason})`);
    }
    return { strategies, rolling };
  };

  return {
    docker,
    takeDown,
    /** The engine and compose when both are there, else null (for work that can go on without them). */
    available: () => (d.docker.engine && d.docker.compose ? docker() : null),
    refFor,
    current,
    pipe,
    stable,
    windowFor,
    ensureRendered,

    /** Check content without deploying it (400 with the service and rule when unsafe). */
    prepare: (slug: string, compose: string, envText: string) => prepare(compose, envText, policy(slug)),

    /**
     * Run a prepared version: render, pull, up, stabilise. `error` is null on success; `touched` says whether the
     * containers may have changed (nothing did when a pull failed or was cancelled).
     */
    async runVersion(rc: RunCtx, p: Prepared, o: { pullAll: boolean }): Promise<{ error: string | null; touched: boolean }> {
      const slug = rc.app.slug;
      const { engine, compose } = docker();
      let subnets: Record<string, string>;
      try {
        subnets = await assignSubnets(engine, slug, p);
      } catch (e) {
        if (e instanceof SubnetPoolExhausted) return { error: e.message, touched: false };
        throw e;
      }
      const rendered = withSubnets(slug, p, subnets);
      writeRendered(slug, rendered);
      if (p.routed.length) await engine.ensureNetwork(PUBLIC_NETWORK);
      const pullError = await pullImages(rc, slug, p, o.pullAll);
      if (pullError) return { error: pullError, touched: false };
      if (rc.signal.aborted) return { error: "cancelled", touched: false };
      const scale = appScale(rc.app);
      const plan = await planServices(engine, rc, p, scale, rendered);
      d.journal.setStrategies(rc.deployId, plan.strategies);
      if (plan.rolling.length === 0) {
        const up = await compose.up(refFor(slug), { ...pipe(rc, "up"), scale });
        if (up.code !== 0) return { error: failed(up, "compose up"), touched: true };
      } else {
        // everything else first, as compose would (a rolled service's dependencies included), the rolled ones left alone
        const rolled = new Set(plan.rolling.map((r) => r.target.service.name));
        const others = p.project.services.filter((x) => !rolled.has(x.name) && !hasProfiles(p, x.name)).map((x) => x.name);
        if (others.length) {
          const otherScale = Object.fromEntries(Object.entries(scale).filter(([k]) => !rolled.has(k)));
          const up = await compose.up(refFor(slug), { ...pipe(rc, "up"), scale: otherScale, services: others, noDeps: true });
          if (up.code !== 0) return { error: failed(up, "compose up"), touched: true };
        }
        // one service after another up to its switch; their drains run side by side, so they do not add up
        const retiring: Promise<void>[] = [];
        try {
          for (const r of plan.rolling) {
            const window = windowFor(rc, p, [r.target.service.name]);
            const error = await d.rollouts!.roll(rc, engine, compose, refFor(slug), r.target, r.old, window, retiring);
            if (error) return { error, touched: true };
          }
        } finally {
          await Promise.all(retiring);
        }
      }
      rc.line("up", "waiting for the containers to be running and healthy");
      return { error: await stable(engine, rc, p, scale), touched: true };
    },
  };
}

export type ComposeRun = ReturnType<typeof createComposeRun>;

/** Whether a service is in a profile (compose up without names leaves it out, and so does Sundeck). */
function hasProfiles(p: Prepared, name: string): boolean {
  const profiles = (p.project.doc.services as Record<string, any> | undefined)?.[name]?.profiles;
  return Array.isArray(profiles) && profiles.length > 0;
}

/** Each service's rev in a rendered file. */
function serviceRevs(rendered: string): Record<string, string> {
  const services =
    (parse(rendered) as { services?: Record<string, { labels?: Record<string, string> | string[] }> }).services ?? {};
  const out: Record<string, string> = {};
  for (const [name, svc] of Object.entries(services)) {
    const labels = svc.labels;
    const rev = Array.isArray(labels)
      ? labels.find((l) => l.startsWith(`${REV_LABEL}=`))?.slice(REV_LABEL.length + 1)
      : labels?.[REV_LABEL];
    if (rev) out[name] = rev;
  }
  return out;
}

/** The one-line error of a compose command that failed: what failed, and the line of its output that says why. */
export function failed(r: RunResult, what: string): string {
  if (r.killed) return "cancelled";
  const cause = causeLine(r.output);
  const hint = POOL_EXHAUSTED.test(r.output) ? POOL_HINT : "";
  return `${what} failed (exit ${r.code})${cause ? `: ${cause}` : ""}${hint}`;
}

/** Docker's words when its address pools have no subnet left for a new network (about 30 on a stock engine). */
const POOL_EXHAUSTED = /non-overlapping IPv4 address pool|address pools have been fully subnetted/i;
const POOL_HINT =
  ": Docker has no address range left for this app's network (a stock engine holds about 30): set docker.subnet_pool" +
  " in Sundeck's config, or give dockerd smaller subnets with default-address-pools in /etc/docker/daemon.json" +
  " (docs/apps.md, Many apps on one host)";

/** Compose v1 ends a failed `up` with this summary; the cause is in an `ERROR: for <service>` line above it. */
const GENERIC = /^(ERROR:\s*)?Encountered errors while bringing up the project\.?$/i;
const ERROR_LINE = /^(ERROR:|Error response from daemon:|Error:|error\b)/i;

/**
 * The line of compose output that names the cause: v1's last `ERROR: for <service>` line, else the last error line
 * that is not v1's generic summary, else the last line. Endpoint and container ids (64 hex digits) are dropped.
 */
export function causeLine(output: string): string {
  const lines = output
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  let pick: string | undefined;
  for (let i = lines.length - 1; i >= 0 && !pick; i--) {
    const m = /^ERROR: for \S+\s+(.+)$/.exec(lines[i]);
    if (m) pick = m[1];
  }
  for (let i = lines.length - 1; i >= 0 && !pick; i--) if (ERROR_LINE.test(lines[i]) && !GENERIC.test(lines[i])) pick = lines[i];
  pick ??= lines[lines.length - 1] ?? "";
  return pick
    .replace(/\s*\([0-9a-f]{64}\)/g, "")
    .replace(/\s+/g, " ")
    .slice(0, 300);
}
