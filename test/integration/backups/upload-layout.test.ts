/**
 * Upload-restore of a volume archive without `container`, on the real engine, through the API: a plain
 * `tar -C dir -c .` (and its gzip) lands in the only service with mounts, in its only mount; Sundeck's own archive
 * (one directory per mount) still lands where it came from; an app with several services with mounts, a service
 * with several mounts for a root archive, and an archive that is neither layout get a 400 saying what is ambiguous,
 * with nothing restored; hostile entries stay refused in the root layout.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startDockerServer, waitApp } from "../../helpers/apps";
import { backUpNow, downloadRun, restoreDone, serviceContainer } from "../../helpers/backups";
import { dockerOk, removeProject, uniqueName } from "../../helpers/docker";
import type { TestServer } from "../../helpers/server";
import { gzip, member, tar } from "../../helpers/tar-corpus";
import { tempDir } from "../../helpers/tmp";

const ONE = uniqueName("sdt-layout-one");
const MANY = uniqueName("sdt-layout-many");
const idle = `    image: sundeck-test/busybox:latest
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
    stop_grace_period: 1s
`;
// one service with one mount, beside one without any
const oneCompose = `services:
  files:
${idle}    volumes:
      - store:/data
  idle:
${idle}volumes:
  store: {}
`;
// two services with mounts, one of them with two
const manyCompose = `services:
  db:
${idle}    volumes:
      - dbdata:/var/lib/db
  web:
${idle}    volumes:
      - webdata:/data
      - webconf:/config
volumes:
  dbdata: {}
  webdata: {}
  webconf: {}
`;

let s: TestServer;

const idOf = (slug: string, service: string) => serviceContainer(`sundeck-${slug}`, service);
/** The container's name, as messages give it. */
const nameOf = async (slug: string, service: string) =>
  (await dockerOk("inspect", "-f", "{{.Name}}", await idOf(slug, service))).trim().replace(/^\//, "");
const sh = async (slug: string, service: string, cmd: string) => dockerOk("exec", await idOf(slug, service), "sh", "-c", cmd);
const listing = async (slug: string, service: string, dir: string) =>
  (await sh(slug, service, `cd ${dir} && find . | sort`)).trim().split("\n");

/** POST an upload; `container` left out unless given. */
const upload = (slug: string, file: Uint8Array, container?: string) => {
  const form = new FormData();
  form.set("file", new Blob([file as BlobPart]), "backup.tar");
  form.set("strategy", "volume");
  if (container) form.set("container", container);
  return s.root.post(`/api/apps/${slug}/backups/upload-restore`, form);
};
/** Upload, expect a 202 and a restore that succeeded, and the app running again. */
const restored = async (slug: string, file: Uint8Array, container?: string) => {
  const r = await upload(slug, file, container);
  expect({ status: r.status, text: r.status === 202 ? "" : r.text }).toEqual({ status: 202, text: "" });
  expect(await restoreDone(s, slug, r.json.restore_id)).toMatchObject({ status: "succeeded", error: null, run_id: null });
  await waitApp(s.root, slug, (a) => a.status === "running");
};

/** What the host's GNU tar makes of a directory's `.`: `./`, `./a.txt`, `./sub/`, `./sub/b.txt`. */
async function plainTar(files: Record<string, string>, args: string[] = ["."]): Promise<Uint8Array> {
  const dir = tempDir("sundeck-layout-");
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  const p = Bun.spawn(["tar", "-C", dir, "-c", ...args], { stdout: "pipe", stderr: "pipe" });
  const out = new Uint8Array(await new Response(p.stdout).arrayBuffer());
  expect(await p.exited).toBe(0);
  return out;
}

beforeAll(async () => {
  await Promise.all([removeProject(`sundeck-${ONE}`, { volumes: true }), removeProject(`sundeck-${MANY}`, { volumes: true })]);
  s = await startDockerServer();
  for (const [slug, compose] of [
    [ONE, oneCompose],
    [MANY, manyCompose],
  ]) {
    expect((await s.root.post("/api/apps/deploy", { slug, compose })).status).toBe(202);
  }
  await waitApp(s.root, ONE, (a) => a.status === "running");
  await waitApp(s.root, MANY, (a) => a.status === "running");
}, 180_000);
afterAll(async () => {
  await s?.stop();
  await Promise.all([removeProject(`sundeck-${ONE}`, { volumes: true }), removeProject(`sundeck-${MANY}`, { volumes: true })]);
}, 60_000);

describe("a root-level archive (tar -C dir -c .) without container", () => {
  it("lands in the only service with mounts, in its only mount", async () => {
    const archive = await plainTar({ "a.txt": "alpha\n", "sub/b.txt": "beta\n" });
    const names = (await new Response(Bun.spawn(["tar", "-t"], { stdin: archive }).stdout).text()).trim().split("\n");
    expect(names).toEqual(expect.arrayContaining(["./", "./a.txt", "./sub/", "./sub/b.txt"]));
    await sh(ONE, "files", "echo kept > /data/kept.txt");
    await restored(ONE, archive);
    expect(await listing(ONE, "files", "/data")).toEqual([".", "./a.txt", "./kept.txt", "./sub", "./sub/b.txt"]);
    expect((await sh(ONE, "files", "cat /data/a.txt /data/sub/b.txt")).trim()).toBe("alpha\nbeta");
  }, 90_000);

  it("lands the same when gzipped", async () => {
    await sh(ONE, "files", "rm -rf /data/* && echo old > /data/c.txt");
    await restored(ONE, gzip(await plainTar({ "c.txt": "gamma\n", "deep/er/d.txt": "delta\n" })));
    expect(await listing(ONE, "files", "/data")).toEqual([".", "./c.txt", "./deep", "./deep/er", "./deep/er/d.txt"]);
    expect((await sh(ONE, "files", "cat /data/c.txt /data/deep/er/d.txt")).trim()).toBe("gamma\ndelta");
  }, 90_000);

  it("lands in the named container's only mount too", async () => {
    await restored(ONE, await plainTar({ "e.txt": "epsilon\n" }), await idOf(ONE, "files"));
    expect((await sh(ONE, "files", "cat /data/e.txt")).trim()).toBe("epsilon");
  }, 90_000);
});

describe("Sundeck's own archive (one directory per mount)", () => {
  it("is backed up, downloaded and uploaded back without container, into its mount", async () => {
    await sh(ONE, "files", "rm -rf /data/* && mkdir -p /data/own && echo mine > /data/own/f.txt");
    const { configId, run } = await backUpNow(s, ONE, { strategy: "volume", service: "files", target: { kind: "local" } });
    expect(run).toMatchObject({ status: "succeeded", error: null });
    const archive = await downloadRun(s, run.id, "local");
    const names = (await new Response(Bun.spawn(["tar", "-tz"], { stdin: archive }).stdout).text()).trim().split("\n");
    expect(names).toEqual(["data/", "data/own/", "data/own/f.txt"]);
    // without the config, the upload goes to the only service with mounts
    expect((await s.root.del(`/api/backups/configs/${configId}`)).status).toBe(204);
    await sh(ONE, "files", "rm -rf /data/own");
    await restored(ONE, archive);
    expect(await listing(ONE, "files", "/data")).toEqual([".", "./own", "./own/f.txt"]);
    expect((await sh(ONE, "files", "cat /data/own/f.txt")).trim()).toBe("mine");
  }, 90_000);

  it("lands per mount in a service with several mounts", async () => {
    const web = await idOf(MANY, "web");
    const archive = tar(
      member({ name: "data/", type: "5" }),
      member({ name: "data/d.txt" }, "in data\n"),
      member({ name: "config/", type: "5" }),
      member({ name: "config/c.txt" }, "in config\n"),
    );
    await restored(MANY, archive, web);
    expect((await sh(MANY, "web", "cat /data/d.txt /config/c.txt")).trim()).toBe("in data\nin config");
  }, 90_000);
});

describe("what is ambiguous is a 400 naming it, with nothing restored", () => {
  const refused = async (slug: string, file: Uint8Array, container: string | undefined, text: string) => {
    const before = (await s.root.get(`/api/apps/${slug}/backups/restores`)).json.length;
    const r = await upload(slug, file, container);
    expect({ status: r.status, text: r.text }).toEqual({ status: 400, text });
    expect((await s.root.get(`/api/apps/${slug}/backups/restores`)).json.length).toBe(before);
    expect(s.ctx.backups.uploads()).toEqual([]);
  };

  it("names the services when several have mounts", async () => {
    await refused(
      MANY,
      await plainTar({ "x.txt": "x\n" }),
      undefined,
      "Bad Request: the app has several services with mounts (db, web): name one in container",
    );
  });

  it("names the mounts when a root archive goes to a service with several", async () => {
    await refused(
      MANY,
      await plainTar({ "x.txt": "x\n" }),
      await idOf(MANY, "web"),
      `Bad Request: the archive holds files at its root (names start with ./) and ${await nameOf(MANY, "web")} has several mounts: put each mount's files under its directory (config/ for /config, data/ for /data)`,
    );
    expect(await sh(MANY, "web", "ls /data /config")).not.toContain("x.txt");
  });

  it("refuses an archive whose top-level names are no mount and do not start with ./", async () => {
    await refused(
      ONE,
      await plainTar({ "a.txt": "a\n", "sub/b.txt": "b\n" }, ["a.txt", "sub"]),
      undefined,
      `Bad Request: the archive's top-level "a.txt", "sub" match no mount of ${await nameOf(ONE, "files")} (data/ for /data) and its names do not start with ./: make an archive of one mount's files with tar -C DIR -c .`,
    );
    expect(await sh(ONE, "files", "ls /data")).not.toContain("a.txt");
  });

  it("refuses a root entry that is not a directory (it would replace the mount's directory)", async () => {
    await sh(ONE, "files", "echo stays > /data/stays.txt");
    await refused(
      ONE,
      tar(member({ name: "." }, "not a directory")),
      undefined,
      `Bad Request: archive entry ".": the archive's root is not a directory`,
    );
    expect((await sh(ONE, "files", "cat /data/stays.txt")).trim()).toBe("stays");
  });

  it("keeps refusing hostile entries in the root layout, naming them", async () => {
    for (const [entry, rule] of [
      [member({ name: "./../../etc/evil" }, "x"), 'archive entry "./../../etc/evil": parent directory segment'],
      [member({ name: "./link", type: "2", linkname: "/etc/passwd" }), 'archive entry "./link": symlink'],
      [member({ name: "./dev", type: "3" }), 'archive entry "./dev": character device'],
    ] as const) {
      await refused(
        ONE,
        gzip(tar(member({ name: "./", type: "5" }), member({ name: "./ok.txt" }, "ok"), entry)),
        undefined,
        `Bad Request: ${rule}`,
      );
    }
    expect(await sh(ONE, "files", "ls /data")).not.toContain("ok.txt");
  });
});
