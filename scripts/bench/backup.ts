/**
 * Backup benchmark (issue 13): a named volume of `--size` MiB (1 GiB by default; half random, half repeated blocks, so
 * it compresses about 2:1) behind a running busybox container labelled as an app's compose service, then
 *   1. Sundeck's backup: the real service (`createBackups`) runs a `volume` config to the local target (Engine API
 *      archive -> tar re-framing -> gzip -> sha256 -> 0600 file), in its own process;
 *   2. the volume emptied, then Sundeck's restore of that run (vetting pass, container stopped, Engine API put
 *      archive, container started), in its own process, and the files checked against the original checksums;
 *   3. the plain way on the same data: `docker run --rm -v vol:/d busybox tar -c /d | gzip > file`, and back with
 *      `gunzip -c file | docker run --rm -i -v vol:/d busybox tar -x -C /`, checked the same way.
 * The resident memory of the Sundeck process is sampled from /proc every 20 ms: growth is the peak minus the RSS it
 * had once ready (modules loaded, database open), goal under 20 MiB. Throughput is volume bytes over wall time.
 *
 *   bun scripts/bench/backup.ts [--size 1024] [--smol] [--keep] [--sundeck-only]
 *
 * Needs the Docker engine and `sundeck-test/busybox:latest` (`bun scripts/test-images.ts`). Exit status 1 when the
 * restored data differs or memory grew past the goal, 2 when the benchmark could not run.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values: v } = parseArgs({
  options: {
    size: { type: "string", default: "1024" },
    keep: { type: "boolean", default: false },
    // run the Sundeck side with `bun --smol` (a smaller heap, collected more often)
    smol: { type: "boolean", default: false },
    // skip the plain `tar | gzip` side (quicker runs while working on the Sundeck side)
    "sundeck-only": { type: "boolean", default: false },
    // internal: the Sundeck side, run in its own process so its memory is its own
    child: { type: "string" },
    work: { type: "string" },
    run: { type: "string" },
  },
});

const SLUG = "benchbackup";
const PROJECT = `sundeck-${SLUG}`;
const SERVICE = "data";
const VOLUME = `${PROJECT}_data`;
const CONTAINER = `${PROJECT}_${SERVICE}_1`;
/** A 16 MiB volume of a second service, backed up and restored first to warm the process up. */
const WARM = "warm";
const WARM_VOLUME = `${PROJECT}_warm`;
const WARM_CONTAINER = `${PROJECT}_${WARM}_1`;
const IMAGE = "sundeck-test/busybox:latest";
const MIB = 1024 * 1024;

// ---------------------------------------------------------------------------------------------------------------
// the Sundeck side

async function child(what: string, work: string, runIds?: string): Promise<void> {
  const { openDb } = await import("../../src/db");
  const { createEngine } = await import("../../src/docker/engine");
  const { createRunner } = await import("../../src/docker/runner");
  const { createSecrets } = await import("../../src/lib/crypto");
  const { systemClock } = await import("../../src/lib/time");
  const { LogSink } = await import("../../src/log/logger");
  const { createActivity } = await import("../../src/modules/activity/service");
  const { createServiceContainers } = await import("../../src/modules/backups/containers");
  const { createBackupRepo } = await import("../../src/modules/backups/repo");
  const { createBackups } = await import("../../src/modules/backups/service");
  const { createStrategies } = await import("../../src/modules/backups/strategies");
  const { createTarget } = await import("../../src/modules/backups/targets");

  const db = openDb(join(work, "bench.db"));
  const log = new LogSink({ stdout: false }).logger("bench");
  const engine = createEngine();
  const strategies = createStrategies({ engine, tmpDir: join(work, "tmp") }) as Record<string, any>;
  const repo = createBackupRepo(db);
  const localDir = join(work, "backups");
  const backups = createBackups({
    db,
    clock: systemClock,
    log,
    repo,
    secrets: createSecrets(randomBytes(32)),
    alerts: { raise() {} },
    containers: createServiceContainers({ engine, compose: null, problem: null } as any, createRunner(log)),
    strategy: (id) => strategies[id] ?? null,
    target: (spec, secret) => createTarget({ ...spec, secret_key: secret ?? "" } as any, { localDir }),
    services: () => [SERVICE, WARM],
    lock: async () => () => {},
    tmpDir: join(work, "tmp"),
    maxRestoreBytes: 8 * 1024 * MIB,
    maxConcurrentRestores: 4,
    activity: createActivity({ db, clock: systemClock, log }),
  });
  const actor = { userId: null, name: "bench", source: "cli" as const, ip: null };

  // ready: everything loaded and open; the parent takes the baseline RSS now and answers "go"
  process.stdout.write("ready\n");
  for await (const _ of console) break;

  const config = (service: string) => {
    const now = new Date().toISOString();
    return repo.insertConfig({
      appSlug: SLUG,
      strategy: "volume",
      service,
      targetKind: "local",
      targetJson: "{}",
      secretEnc: null,
      schedule: null,
      timezone: null,
      retentionCount: null,
      retentionDays: null,
      preHooks: "[]",
      postHooks: "[]",
      enabled: true,
      lastScheduledAt: now,
      createdAt: now,
      updatedAt: now,
    });
  };
  const backup = async (service: string) => {
    const c = config(service);
    const { run_id } = backups.runNow(c.id, actor);
    await backups.waitRun(c.id);
    return repo.run(run_id)!;
  };
  const restore = async (run: number) => {
    const { restore_id } = await backups.restoreRun(run, actor);
    await backups.waitRestore(restore_id);
    return repo.restore(restore_id)!;
  };
  const [warmRun, dataRun] = (runIds ?? "").split(",").map(Number);

  // a warm-up pass on the small volume first: the runtime's one-time costs (JIT, allocator arenas, the engine
  // client's first connections) land before the parent takes its second baseline
  const w = what === "backup" ? await backup(WARM) : await restore(warmRun);
  if (w.status !== "succeeded") throw new Error(`warm-up ${what} failed: ${w.error}`);
  process.stdout.write(`warm ${what === "backup" ? w.id : ""}\n`);

  const t0 = performance.now();
  if (what === "backup") {
    const r = await backup(SERVICE);
    process.stdout.write(
      `${JSON.stringify({ ms: performance.now() - t0, status: r.status, error: r.error, run: r.id, size: r.sizeBytes, sha256: r.sha256 })}\n`,
    );
  } else {
    const r = await restore(dataRun);
    process.stdout.write(`${JSON.stringify({ ms: performance.now() - t0, status: r.status, error: r.error, bytes: r.bytes })}\n`);
  }
  db.close();
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------------------------
// the orchestrator

function sh(cmd: string, opts: { quiet?: boolean } = {}): string {
  const r = Bun.spawnSync(["sh", "-c", cmd], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0 && !opts.quiet) throw new Error(`${cmd.slice(0, 80)} failed: ${r.stderr.toString().trim()}`);
  return r.stdout.toString();
}

function rssMiB(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(text)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

const TICKS = Number(sh("getconf CLK_TCK", { quiet: true }).trim()) || 100;
function cpuOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / TICKS;
  } catch {
    return 0;
  }
}

interface Measured {
  /** Wall time of the 1 GiB operation alone (the child's clock, warm-up excluded). */
  ms: number;
  /** RSS once ready (modules loaded, database open), and once the warm-up pass is over. */
  readyMiB: number;
  warmMiB: number;
  /** Highest RSS over the whole life of the process after ready, and over the 1 GiB operation. */
  peakMiB: number;
  runPeakMiB: number;
  /** CPU seconds of the process during the 1 GiB operation. */
  cpuS: number;
  warmRun: number | null;
  out: any;
}

/** Run the Sundeck side in its own process, sampling its RSS every 20 ms from the moment it is ready until it exits. */
async function measured(args: string[]): Promise<Measured> {
  const argv = [process.execPath, ...(v.smol ? ["--smol"] : []), resolve(import.meta.path), ...args];
  const proc = Bun.spawn(argv, {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  const dec = new TextDecoder();
  let buf = "";
  const line = async (): Promise<string> => {
    for (;;) {
      const i = buf.indexOf("\n");
      if (i >= 0) {
        const l = buf.slice(0, i);
        buf = buf.slice(i + 1);
        return l;
      }
      const r = await reader.read();
      if (r.done) throw new Error(`the sundeck side exited early: ${buf}`);
      buf += dec.decode(r.value, { stream: true });
    }
  };
  if ((await line()) !== "ready") throw new Error("the sundeck side did not get ready");
  const readyMiB = rssMiB(proc.pid);
  let peakMiB = readyMiB;
  let runPeakMiB = 0;
  let running = false;
  let cpuLast = 0;
  const timer = setInterval(() => {
    const rss = rssMiB(proc.pid);
    peakMiB = Math.max(peakMiB, rss);
    if (running) runPeakMiB = Math.max(runPeakMiB, rss);
    cpuLast = Math.max(cpuLast, cpuOf(proc.pid));
  }, 20);
  proc.stdin.write("go\n");
  await proc.stdin.flush();
  const warm = await line();
  if (!warm.startsWith("warm")) throw new Error(`the sundeck side said ${warm}`);
  const warmMiB = rssMiB(proc.pid);
  const cpu0 = cpuOf(proc.pid);
  runPeakMiB = warmMiB;
  running = true;
  const result = await line();
  running = false;
  const cpu1 = Math.max(cpuLast, cpuOf(proc.pid));
  clearInterval(timer);
  await proc.exited;
  const out = JSON.parse(result);
  const warmRun = Number(warm.split(" ")[1]) || null;
  return { ms: out.ms, readyMiB, warmMiB, peakMiB, runPeakMiB, cpuS: cpu1 - cpu0, warmRun, out };
}

function checksum(volume: string): string {
  // every file's md5 in name order, then one md5 of that list: equal lists mean equal data
  return sh(`docker run --rm -v ${volume}:/d ${IMAGE} sh -c 'cd /d && find . -type f | sort | xargs md5sum | md5sum'`).trim();
}

function wipe(volume: string): void {
  sh(`docker run --rm -v ${volume}:/d ${IMAGE} sh -c 'rm -rf /d/* && test -z "$(ls -A /d)"'`);
}

function fill(volume: string, sizeMiB: number): void {
  // 16 MiB files, each 1 MiB of random bytes then 1 MiB of a repeated line, eight times: ~2:1 under gzip
  sh(`docker volume create ${volume} >/dev/null`);
  sh(
    `docker run --rm -v ${volume}:/d ${IMAGE} sh -c 'i=0; while [ $i -lt ${sizeMiB / 16} ]; do
       mkdir -p /d/dir$((i % 8)); f=/d/dir$((i % 8))/file$i.bin;
       j=0; while [ $j -lt 8 ]; do head -c 1048576 /dev/urandom; yes "sundeck backup bench $i $j" | head -c 1048576; j=$((j+1)); done > $f;
       i=$((i+1)); done'`,
  );
}

function serve(container: string, service: string, volume: string): void {
  // a running container of the app's compose service, labelled as compose labels it; it stops at once on SIGTERM
  sh(
    `docker run -d --name ${container} --label com.docker.compose.project=${PROJECT} --label com.docker.compose.service=${service} ` +
      `--label com.docker.compose.container-number=1 --label com.docker.compose.oneoff=False -v ${volume}:/data ${IMAGE} ` +
      `sh -c 'trap "exit 0" TERM; sleep 86400 & wait' >/dev/null`,
  );
}

function cleanup(work: string | null): void {
  sh(`docker rm -f ${CONTAINER} ${WARM_CONTAINER}`, { quiet: true });
  sh(`docker volume rm -f ${VOLUME} ${WARM_VOLUME}`, { quiet: true });
  if (work && !v.keep) rmSync(work, { recursive: true, force: true });
}

function timed(cmd: string): number {
  const t0 = performance.now();
  sh(cmd);
  return performance.now() - t0;
}

const mibps = (bytes: number, ms: number) => (bytes / MIB / (ms / 1000)).toFixed(0);
const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

async function main(): Promise<void> {
  const sizeMiB = Number(v.size);
  if (!(sizeMiB >= 16) || sizeMiB % 16 !== 0) {
    console.error("--size must be a multiple of 16 MiB, at least 16");
    process.exit(2);
  }
  if (!sh(`docker image inspect ${IMAGE} >/dev/null 2>&1 && echo ok`, { quiet: true }).includes("ok")) {
    console.error(`${IMAGE} is missing: run bun scripts/test-images.ts first`);
    process.exit(2);
  }
  const work = mkdtempSync(join(tmpdir(), "sundeck-bench-backup-"));
  mkdirSync(join(work, "tmp"), { recursive: true, mode: 0o700 });
  process.on("SIGINT", () => {
    cleanup(work);
    process.exit(130);
  });
  cleanup(null);
  const load0 = loadavg();
  try {
    console.error(`filling ${VOLUME} with ${sizeMiB} MiB and ${WARM_VOLUME} with 16 MiB`);
    fill(VOLUME, sizeMiB);
    fill(WARM_VOLUME, 16);
    const bytes = Number(
      sh(`docker run --rm -v ${VOLUME}:/d ${IMAGE} sh -c 'du -sb /d 2>/dev/null || du -sk /d'`).split(/\s/)[0],
    );
    const original = checksum(VOLUME);
    const warmOriginal = checksum(WARM_VOLUME);
    serve(CONTAINER, SERVICE, VOLUME);
    serve(WARM_CONTAINER, WARM, WARM_VOLUME);

    console.error("sundeck backup");
    const b = await measured(["--child", "backup", "--work", work]);
    if (b.out.status !== "succeeded") throw new Error(`sundeck backup failed: ${b.out.error}`);
    wipe(VOLUME);
    wipe(WARM_VOLUME);
    console.error("sundeck restore");
    const r = await measured(["--child", "restore", "--work", work, "--run", `${b.warmRun},${b.out.run}`]);
    if (r.out.status !== "succeeded") throw new Error(`sundeck restore failed: ${r.out.error}`);
    const sundeckOk = checksum(VOLUME) === original && checksum(WARM_VOLUME) === warmOriginal;

    if (v["sundeck-only"]) {
      const g = (m: Measured) => (m.runPeakMiB - m.warmMiB).toFixed(1);
      console.log(`${sizeMiB} MiB, data ${sundeckOk ? "identical" : "DIFFERENT"}, load ${load0} / ${loadavg()}`);
      console.log(
        `backup ${(b.ms / 1000).toFixed(1)} s +${g(b)} MiB (warm ${b.warmMiB.toFixed(1)}, peak ${b.runPeakMiB.toFixed(1)})`,
      );
      console.log(
        `restore ${(r.ms / 1000).toFixed(1)} s +${g(r)} MiB (warm ${r.warmMiB.toFixed(1)}, peak ${r.runPeakMiB.toFixed(1)})`,
      );
      cleanup(work);
      process.exit(sundeckOk ? 0 : 1);
    }
    console.error("plain tar | gzip");
    const plainFile = join(work, "plain.tar.gz");
    const pb = timed(`docker run --rm -v ${VOLUME}:/d ${IMAGE} tar -c /d | gzip > ${plainFile}`);
    const plainSize = statSync(plainFile).size;
    // where the plain side's time goes: the tar through the docker CLI alone, and gzip alone on the same bytes
    const rawTar = join(work, "plain.tar");
    const pTransport = timed(`docker run --rm -v ${VOLUME}:/d ${IMAGE} tar -c /d > ${rawTar}`);
    const pGzip = timed(`gzip -c ${rawTar} > /dev/null`);
    rmSync(rawTar);
    wipe(VOLUME);
    const pr = timed(`gunzip -c ${plainFile} | docker run --rm -i -v ${VOLUME}:/d ${IMAGE} tar -x -C /`);
    const plainOk = checksum(VOLUME) === original;

    const rss = (m: Measured) =>
      `${m.readyMiB.toFixed(1)} / ${m.warmMiB.toFixed(1)} / ${m.runPeakMiB.toFixed(1)}: **+${(m.runPeakMiB - m.warmMiB).toFixed(1)}** (+${(m.peakMiB - m.readyMiB).toFixed(1)} from ready)`;
    const rows: Array<[string, number, number, string, string]> = [
      ["sundeck backup (volume strategy -> gzip -> local target)", b.ms, b.out.size, rss(b), b.cpuS.toFixed(1)],
      ["plain `docker run ... tar -c /d \\| gzip > file`", pb, plainSize, "", ""],
      ["  of which: `docker run ... tar -c /d > file` alone", pTransport, bytes, "", ""],
      ["  of which: `gzip -c file > /dev/null` alone", pGzip, plainSize, "", ""],
      ["sundeck restore (vetting pass, stop, put archive, start)", r.ms, b.out.size, rss(r), r.cpuS.toFixed(1)],
      ["plain `gunzip -c file \\| docker run -i ... tar -x`", pr, plainSize, "", ""],
    ];
    console.log(`load average before / after: ${load0} / ${loadavg()} (${navigator.hardwareConcurrency} CPUs)`);
    console.log(
      `volume: ${(bytes / MIB).toFixed(0)} MiB in ${sizeMiB / 16} files; data after restore: sundeck ${sundeckOk ? "identical" : "DIFFERENT"}, plain ${plainOk ? "identical" : "DIFFERENT"}\n`,
    );
    console.log("| | wall | throughput | archive | RSS MiB: ready / after warm-up / peak: growth | CPU s |");
    console.log("|---|---:|---:|---:|---|---:|");
    for (const [name, ms, size, mem, cpu] of rows) {
      console.log(
        `| ${name} | ${(ms / 1000).toFixed(1)} s | ${mibps(bytes, ms)} MiB/s | ${(size / MIB).toFixed(0)} MiB | ${mem} | ${cpu} |`,
      );
    }
    const growthB = b.runPeakMiB - b.warmMiB;
    const growthR = r.runPeakMiB - r.warmMiB;
    const ok = sundeckOk && plainOk && growthB < 20 && growthR < 20;
    console.log(
      `\nRSS growth over the ${sizeMiB} MiB operation, goal < 20 MiB: backup +${growthB.toFixed(1)}, restore +${growthR.toFixed(1)}: ${ok ? "met" : "MISSED"}` +
        `\n(from a cold process, counting the runtime's one-time warm-up: backup +${(b.peakMiB - b.readyMiB).toFixed(1)}, restore +${(r.peakMiB - r.readyMiB).toFixed(1)})`,
    );
    cleanup(work);
    process.exit(ok ? 0 : 1);
  } catch (e) {
    console.error(`benchmark failed: ${(e as Error).message}`);
    cleanup(work);
    process.exit(2);
  }
}

if (v.child) await child(v.child, v.work!, v.run);
else await main();
