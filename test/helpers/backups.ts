/**
 * Backups test helpers: an app with a compose version in the database (no files, so the reconciler leaves it alone),
 * and fakes of what surrounds the runner and the restorer: a strategy that dumps known bytes or restores into a
 * list, and containers whose hooks are scripted.
 */
import type { Ctx } from "../../src/context";
import type { ServiceContainers } from "../../src/modules/backups/containers";
import type { BackupContainer, OpControl, Strategy } from "../../src/modules/backups/types";

/** Create app `slug` whose current version is `compose` (services read from it). */
export function seedApp(ctx: Ctx, slug: string, compose: string): void {
  const now = new Date().toISOString();
  const app = ctx.appRepo.create(slug, now);
  const v = ctx.db.sqlite
    .query(
      "INSERT INTO compose_versions (app_id, version, hash, compose, env_sealed, source, created_by, status, created_at) VALUES (?, 1, ?, ?, ?, 'api', 'test', 'good', ?) RETURNING id",
    )
    .get(app.id, `h-${slug}`, compose, ctx.secrets.seal(""), now) as { id: number };
  ctx.appRepo.update(app.id, { currentVersionId: v.id }, now);
}

/** A compose file with the named services on a tiny image. */
export const composeOf = (...services: string[]) =>
  `services:\n${services.map((s) => `  ${s}:\n    image: busybox:latest\n`).join("")}`;

/** A fake container of a service. */
export const fakeContainer = (service: string): BackupContainer => ({
  id: `id-${service}`,
  name: `sundeck-app-${service}-1`,
  service,
  image: "busybox:latest",
  env: [],
  mounts: [],
});

/** Controls of a fake strategy: what it dumps, a gate that holds dumps and restores, what it restored. */
export interface FakeStrategy extends Strategy {
  /** Chunks the next dumps yield; an Error in the list makes the stream fail there. */
  chunks: Array<Uint8Array | Error>;
  /** While set, dump streams (after `holdAfter` chunks) and restores wait for it. */
  gate: Promise<void> | null;
  holdAfter: number;
  restored: Array<{ container: string; bytes: Uint8Array }>;
}

/** A strategy of id `id` (extension `.bin.gz`) driven by the test. */
export function fakeStrategy(id: Strategy["id"]): FakeStrategy {
  const s: FakeStrategy = {
    id,
    extension: id === "volume" || id === "sqlite" ? ".tar.gz" : ".bin.gz",
    chunks: [new TextEncoder().encode("hello backup\n")],
    gate: null,
    holdAfter: 0,
    restored: [],
    async dump(_c: BackupContainer, ctl: OpControl) {
      const chunks = [...s.chunks];
      let sent = 0;
      return new ReadableStream<Uint8Array>({
        async pull(ctrl) {
          if (s.gate && sent >= s.holdAfter) await s.gate;
          sent++;
          if (ctl.signal?.aborted) return ctrl.error(new Error("aborted"));
          const next = chunks.shift();
          if (next === undefined) ctrl.close();
          else if (next instanceof Error) ctrl.error(next);
          else ctrl.enqueue(next);
        },
      });
    },
    async restore(c: BackupContainer, data: ReadableStream<Uint8Array>) {
      if (s.gate) await s.gate;
      const bytes = new Uint8Array(await new Response(data).arrayBuffer());
      s.restored.push({ container: c.name, bytes });
    },
  };
  return s;
}

/** Fake containers: every service has a running container; hooks answer by script. */
export interface FakeContainers extends ServiceContainers {
  execs: string[];
  stops: string[];
  starts: string[];
  /** Exit code of a hook command (default 0). */
  codeOf: (cmd: string) => number;
}

export function fakeContainers(): FakeContainers {
  const f: FakeContainers = {
    execs: [],
    stops: [],
    starts: [],
    codeOf: () => 0,
    find: async (_slug, service) => fakeContainer(service),
    running: async (_slug, service) => [fakeContainer(service)],
    byName: async (_slug, name) => ({ ...fakeContainer(name.split("-")[2] ?? name), name }),
    exec: async (_c, cmd, signal) => {
      f.execs.push(cmd);
      // "hang" waits until the run gives up on it
      if (cmd === "hang") await new Promise<void>((r) => signal?.addEventListener("abort", () => r(), { once: true }));
      const code = f.codeOf(cmd);
      return { code, output: code ? `${cmd}: failed` : "" };
    },
    stop: async (c) => {
      f.stops.push(c.name);
    },
    start: async (c) => {
      f.starts.push(c.name);
    },
  };
  return f;
}

/** A gate: `hold` closes it (strategies wait), `open` lets them go. */
export function gateOn(s: FakeStrategy): () => void {
  let open!: () => void;
  s.gate = new Promise<void>((r) => {
    open = r;
  });
  return () => {
    s.gate = null;
    open();
  };
}
