/**
 * `sundeck backup` against a real server (real SQLite, the real runner, gzip and local target, s3rver for the
 * presigned download), run from source in a child process as a user would run it. Only what surrounds the backups
 * domain is replaced: the strategy dumps known bytes and records what it restores, and the containers are fixed
 * records, so the command's behaviour is what is tested: list (text and JSON), run followed to success and to
 * failure, download verified against the recorded sha256 (and a corrupted archive refused), restore from a run and
 * from a file (a hostile archive's refusal shown as the server says it), and usage mistakes.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { sizeText } from "../../../src/cli/backup";
import type { BackupContainer, Strategy } from "../../../src/modules/backups/types";
import type { BackupConfig, BackupRun } from "../../../src/shared/backups";
import { MAIN, runSundeck } from "../../helpers/cli";
import { until } from "../../helpers/http";
import { type S3Server, startS3 } from "../../helpers/s3";
import { startTestServer, type TestServer } from "../../helpers/server";
import { member, tar } from "../../helpers/tar-corpus";
import { tempDir } from "../../helpers/tmp";

const SLUG = "shop";
/** Bytes the fake dump yields: not compressible to nothing, so the size and progress mean something. */
const DUMP = new Uint8Array(randomBytes(3 * 2 ** 20));
const restored: Array<{ container: string; bytes: Uint8Array }> = [];

const container = (service: string): BackupContainer => ({
  id: `id-${service}`,
  name: `sundeck-${SLUG}-${service}-1`,
  service,
  image: "redis:7",
  env: [],
  mounts: [],
});

/** A strategy around the real runner: dumps DUMP (or fails for the service "broken"), records what it restores. */
const fakeStrategy = (id: string): Strategy => ({
  id: id as Strategy["id"],
  extension: id === "volume" ? ".tar" : ".rdb",
  async dump(c, ctl) {
    if (c.service === "broken") throw new Error("redis-cli: connection refused");
    let sent = 0;
    return new ReadableStream<Uint8Array>({
      pull(ctrl) {
        if (sent >= DUMP.length) return ctrl.close();
        const chunk = DUMP.subarray(sent, sent + 256 * 1024);
        sent += chunk.length;
        ctl.progress?.(sent);
        ctrl.enqueue(chunk);
      },
    });
  },
  async restore(c, data) {
    const bytes = new Uint8Array(await new Response(data).arrayBuffer());
    restored.push({ container: c.name, bytes });
  },
});

let s: TestServer;
let s3: S3Server;
let key: string;
let home: string;

const sundeck = (...args: string[]) => runSundeck(args, { url: s.url, key, home });

async function createConfig(body: Record<string, unknown>): Promise<BackupConfig> {
  const res = await s.root.post(`/api/apps/${SLUG}/backups/configs`, {
    strategy: "redis",
    service: "cache",
    target: { kind: "local" },
    schedule: null,
    retention_count: null,
    retention_days: null,
    pre_hooks: [],
    post_hooks: [],
    enabled: true,
    ...body,
  });
  if (res.status !== 201) throw new Error(`config not created: ${res.status} ${res.text}`);
  return res.json;
}

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
let local: BackupConfig;
let broken: BackupConfig;
let onS3: BackupConfig;

beforeAll(async () => {
  home = tempDir();
  s3 = await startS3();
  s = await startTestServer(
    {},
    {
      backups: {
        strategy: fakeStrategy as any,
        containers: {
          find: async (_slug, service) => container(service),
          byName: async (_slug, name) => ({ ...container("data"), name }),
          exec: async () => ({ code: 0, output: "" }),
          stop: async () => {},
          start: async () => {},
        },
      },
    },
  );
  // the app's services come from its compose file
  mkdirSync(join(s.ctx.config.apps_dir, SLUG), { recursive: true });
  writeFileSync(
    join(s.ctx.config.apps_dir, SLUG, "docker-compose.yml"),
    "services:\n  cache:\n    image: redis:7\n  broken:\n    image: redis:7\n  data:\n    image: busybox\n",
  );
  s.ctx.appRepo.create(SLUG, new Date().toISOString());
  await s.user("ops", "admin");
  key = s.keyFor("ops").key;
  local = await createConfig({});
  broken = await createConfig({ service: "broken" });
  onS3 = await createConfig({
    target: {
      kind: "s3",
      endpoint: s3.endpoint,
      bucket: s3.bucket,
      prefix: "cli",
      region: "us-east-1",
      access_key: s3.accessKey,
      secret_key: s3.secretKey,
      path_style: true,
    },
  });
}, 60_000);

afterAll(async () => {
  await s?.stop();
  await s3?.stop();
});

// each test runs the command from source, a few times for some
setDefaultTimeout(30_000);

describe("sundeck backup", () => {
  let run: BackupRun;

  test("list: configs, and no runs yet", async () => {
    const r = await sundeck("backup", "list", SLUG);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("cache");
    expect(r.stdout).toMatch(/3 +cache +redis +s3 backups\/cli +by hand/);
    expect(r.stdout).toContain("by hand");
    expect(r.stdout).toContain("no runs yet");
  });

  test("run --config: followed to success, with size and sha256", async () => {
    const r = await sundeck("backup", "run", SLUG, "--config", String(local.id));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^run \d+ \(cache redis\) succeeded: 3\.0 MiB in [\d.]+s, sha256 [0-9a-f]{12}\n$/);
    const json = await sundeck("backup", "list", SLUG, "--output", "json");
    const out = JSON.parse(json.stdout) as { configs: BackupConfig[]; runs: BackupRun[] };
    expect(out.configs.map((c) => c.id).sort()).toEqual([local.id, broken.id, onS3.id].sort());
    run = out.runs[0];
    expect(run).toMatchObject({ config_id: local.id, status: "succeeded", service: "cache", trigger: "manual" });
    expect(r.stdout).toContain(`run ${run.id} `);
    expect(r.stdout).toContain(run.sha256?.slice(0, 12) ?? "none");
  });

  test("run: a failing dump exits 1 naming the run and the reason", async () => {
    const r = await sundeck("backup", "run", SLUG, "--config", String(broken.id));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^sundeck: backup run \d+ of shop failed: .*connection refused/);
    expect(r.stdout).toContain("failed");
  });

  test("run --detach returns once started; an unknown config is an error", async () => {
    const d = await sundeck("backup", "run", SLUG, "--config", String(local.id), "--detach");
    expect(d.code).toBe(0);
    expect(d.stdout).toMatch(/^backup run \d+ of shop \(cache redis\) started\nfollow with: sundeck backup list shop\n$/);
    const u = await sundeck("backup", "run", SLUG, "--config", "999");
    expect(u.code).toBe(1);
    expect(u.stderr).toBe("sundeck: shop has no backup config 999 (see sundeck backup list shop)\n");
  });

  test("download: streamed to the file, sha256 verified against the run", async () => {
    const file = join(home, "cache.rdb.gz");
    const r = await sundeck("backup", "download", String(run.id), "-o", file);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`wrote ${sizeText(run.size_bytes)} to ${file}, sha256 ${run.sha256} verified against run ${run.id}\n`);
    const got = readFileSync(file);
    expect(sha(got)).toBe(run.sha256!);
    expect(gunzipSync(got).equals(Buffer.from(DUMP))).toBe(true);
    // no temp file left next to it
    expect(readdirSync(home).filter((n) => n.includes(".part"))).toEqual([]);
  });

  test("download: the archive's own name by default, and a corrupted archive is refused", async () => {
    const stored = readdirSync(join(s.ctx.config.data_dir, "backups"), { recursive: true, withFileTypes: true }).filter(
      (e) => e.isFile() && e.name.includes(`-r${run.id}.`),
    );
    expect(stored.length).toBe(1);
    const path = join(stored[0].parentPath, stored[0].name);
    const dir = tempDir();
    const named = await Bun.spawn([process.execPath, MAIN, "backup", "download", String(run.id), "--app", SLUG], {
      env: { PATH: process.env.PATH ?? "", HOME: home, XDG_CONFIG_HOME: home, SUNDECK_URL: s.url, SUNDECK_API_KEY: key },
      cwd: dir,
      stdout: "pipe",
      stderr: "pipe",
    }).exited;
    expect(named).toBe(0);
    expect(readdirSync(dir)).toEqual([stored[0].name]);
    // same length, one byte changed: the server streams it, the CLI notices
    const bytes = readFileSync(path);
    bytes[bytes.length - 20] ^= 0xff;
    writeFileSync(path, bytes);
    const bad = join(home, "bad.gz");
    const r = await sundeck("backup", "download", String(run.id), "-o", bad);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `sundeck: sha256 mismatch for run ${run.id}: got ${sha(bytes)}, the server recorded ${run.sha256}`,
    );
    expect(statSync(bad).size).toBe(bytes.length);
    bytes[bytes.length - 20] ^= 0xff;
    writeFileSync(path, bytes);
  });

  test("download from S3: the redirect to the presigned URL is followed, and verified", async () => {
    const r1 = await sundeck("backup", "run", SLUG, "--config", String(onS3.id));
    expect(r1.code).toBe(0);
    const id = Number(/^run (\d+)/.exec(r1.stdout)?.[1]);
    const file = join(home, "from-s3.gz");
    const r = await sundeck("backup", "download", String(id), "-o", file);
    expect(r.stderr).toContain(`verified against run ${id}`);
    expect(r.code).toBe(0);
    expect(gunzipSync(readFileSync(file)).equals(Buffer.from(DUMP))).toBe(true);
  });

  test("download of a Sundeck state run (no app): found among the state runs and verified for a super-admin", async () => {
    const root = s.keyFor("root", "cli-root");
    const made = await root.post("/api/system/backups/configs", { target: { kind: "local" } });
    expect(made.status).toBe(201);
    const started = await root.post(`/api/backups/configs/${made.json.id}/run`);
    expect(started.status).toBe(202);
    const id = started.json.run_id as number;
    await until(
      async () => (await root.get("/api/system/backups/runs")).json.find((r: any) => r.id === id)?.status === "succeeded",
      {
        timeout: 20_000,
        what: "the state run",
      },
    );
    const file = join(home, "state.db.gz");
    const p = Bun.spawn([process.execPath, MAIN, "backup", "download", String(id), "-o", file], {
      env: { PATH: process.env.PATH ?? "", HOME: home, XDG_CONFIG_HOME: home, SUNDECK_URL: s.url, SUNDECK_API_KEY: root.key },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stderr, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
    expect(stderr).toContain(`verified against run ${id}`);
    expect(code).toBe(0);
  });

  test("restore --run --yes: followed to the end; the strategy got the dump back", async () => {
    restored.length = 0;
    const r = await sundeck("backup", "restore", SLUG, "--run", String(run.id), "--yes");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^restored shop from run ${run.id} \\(restore \\d+`));
    expect(restored.length).toBe(1);
    expect(restored[0].container).toBe("sundeck-shop-cache-1");
    expect(Buffer.from(restored[0].bytes).equals(Buffer.from(DUMP))).toBe(true);
  });

  test("restore --file: an accepted upload, and a hostile archive refused with the entry named", async () => {
    restored.length = 0;
    const ok = join(home, "ok.rdb");
    writeFileSync(ok, "REDIS0011 fake rdb");
    const r = await sundeck(
      "backup",
      "restore",
      SLUG,
      "--file",
      ok,
      "--strategy",
      "redis",
      "--container",
      "sundeck-shop-cache-1",
      "--yes",
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^restored shop from .*ok\.rdb \(redis\)/);
    expect(new TextDecoder().decode(restored[0].bytes)).toBe("REDIS0011 fake rdb");

    const evil = join(home, "evil.tar");
    writeFileSync(evil, tar(member({ name: "../../etc/cron.d/evil" }, "* * * * * root sh\n")));
    const bad = await sundeck("backup", "restore", SLUG, "--file", evil, "--strategy", "volume", "--yes");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('sundeck: Bad Request: archive entry "../../etc/cron.d/evil": parent directory segment\n');
  });

  test("on a terminal: restore asks first (no keeps the data), run shows a status line", async () => {
    /** The command on a terminal (script(1)); `answer` typed once the question shows. */
    const onTerminal = async (args: string, answer?: string) => {
      const p = Bun.spawn(["script", "-qfec", `exec ${process.execPath} ${MAIN} ${args}`, "/dev/null"], {
        env: {
          PATH: process.env.PATH ?? "",
          HOME: home,
          XDG_CONFIG_HOME: home,
          SUNDECK_URL: s.url,
          SUNDECK_API_KEY: key,
          TERM: "xterm",
        },
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
      });
      let out = "";
      const reading = (async () => {
        for await (const chunk of p.stdout) out += new TextDecoder().decode(chunk);
      })();
      if (answer !== undefined) {
        await until(() => out.includes("[y/N]"), { timeout: 15_000, what: "the question" });
        p.stdin.write(answer);
        await p.stdin.flush();
      }
      const code = await p.exited;
      await reading;
      return { code, out };
    };
    restored.length = 0;
    const no = await onTerminal(`backup restore ${SLUG} --run ${run.id}`, "n\r");
    expect(no.out).toContain(`restore ${SLUG} on ${s.url} from run ${run.id}? its current data is replaced [y/N]`);
    expect(no.out).toContain("sundeck: not restored");
    expect(no.code).toBe(1);
    expect(restored).toEqual([]);
    const yes = await onTerminal(`backup restore ${SLUG} --run ${run.id}`, "y\r");
    expect(yes.code).toBe(0);
    expect(yes.out).toContain(`restored ${SLUG} from run ${run.id}`);
    expect(restored.length).toBe(1);

    const ran = await onTerminal(`backup run ${SLUG} --config ${local.id}`);
    expect(ran.code).toBe(0);
    expect(ran.out).toMatch(/backing up shop/);
    expect(ran.out).toMatch(/run \d+ \(cache redis\) succeeded/);
  });

  test("usage mistakes exit 2; an unknown app exits 1", async () => {
    const none = await sundeck("backup", "restore", SLUG, "--yes");
    expect(none.code).toBe(2);
    expect(none.stderr).toBe("sundeck: give either --run ID or --file PATH (see sundeck --help)\n");
    const noStrategy = await sundeck("backup", "restore", SLUG, "--file", "x.tar");
    expect(noStrategy.code).toBe(2);
    expect((await sundeck("backup", "download", "abc")).code).toBe(2);
    const unknown = await sundeck("backup", "list", "nope");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("no app named nope");
  });
});
