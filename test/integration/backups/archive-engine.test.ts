/**
 * The archive reader against its real consumer, the Docker engine's archive endpoints (Go's archive/tar): every
 * benign spelling the reader accepts is extracted by the engine into the entries the reader listed (names, types,
 * sizes), and the tar the engine writes back for that directory is itself accepted and lists the same entries.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { checkedTar, type TarEntry, tarEntries } from "../../../src/modules/backups/archive/vet";
import { docker, ensureTestImages, removeProject, requireDocker, TEST_IMAGES, uniqueName } from "../../helpers/docker";
import { concat, gnuLong, gzip, header, member, pax, streamOf, tar } from "../../helpers/tar-corpus";

const CAP = 1024 ** 3;
const project = uniqueName("sundeck-archive");
let container = "";
const enc = new TextEncoder();

/** Fix a header's checksum after editing a field (the corpus builder sums before we poke). */
function resum(h: Uint8Array): Uint8Array {
  const b = h.slice();
  b.fill(0x20, 148, 156);
  let sum = 0;
  for (const v of b) sum += v;
  b.set(enc.encode(`${sum.toString(8).padStart(6, "0")}\0 `), 148);
  return b;
}

/** A header with another ustar version field (Go takes the prefix under the magic alone, the reader too). */
function withVersion(m: Uint8Array, version: string): Uint8Array {
  const h = m.slice(0, 512);
  h.set(enc.encode(version), 263);
  return concat(resum(h), m.subarray(512));
}

/** One archive holding every benign spelling, under `spell/`. */
function spellings(): Uint8Array {
  const b256 = new Uint8Array(12);
  b256[0] = 0x80;
  b256[11] = 5;
  const gnuTimes = header({ name: "spell/gnu-times", format: "gnu", size: 1 });
  gnuTimes.set(enc.encode("14621626641\u000014621626641\u0000"), 345);
  const longName = `spell/${"p".repeat(150)}/${"ü".repeat(80)}.txt`;
  return tar(
    member({ name: "spell/", type: "5" }),
    member({ name: "spell/plain.txt" }, "plain\n"),
    member({ name: "spell/empty" }),
    member({ name: "spell/old-type", type: "\0" }, "old\n"),
    member({ name: "spell/old-dir/", type: "\0" }),
    member({ name: "spell/v7", format: "v7" }, "v7\n"),
    resum(gnuTimes),
    new Uint8Array(512),
    concat(header({ name: "spell/b256", sizeField: b256 }), new Uint8Array(512)),
    pax({ size: "600" }),
    member({ name: "spell/pax-size", size: 0 }),
    new Uint8Array(1024),
    pax({ path: longName, mtime: "1700000000.25", "SCHILY.xattr.user.note": "x" }),
    member({ name: "spell/short" }, "long via pax\n"),
    gnuLong(`spell/${"g".repeat(200)}`),
    member({ name: "spell/ggg", format: "gnu" }, "long via L\n"),
    member({ name: "spell/dir/a/b/", type: "5" }),
    member({ name: "spell", prefix: "spell/ustar-prefix" }, "prefix\n"),
    withVersion(member({ name: "vx", prefix: "spell/version" }, "v\n"), "  "),
  );
}

const norm = (e: TarEntry) => ({ name: e.name.replace(/^\.\//, "").replace(/\/$/, ""), type: e.type, size: e.size });
const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** The entries plus the parent directories an extractor creates for them (and writes back). */
function withParents(entries: Array<{ name: string; type: string; size: number }>) {
  const names = new Set(entries.map((e) => e.name));
  const out = [...entries];
  for (const e of entries)
    for (let i = e.name.indexOf("/"); i > 0; i = e.name.indexOf("/", i + 1)) {
      const dir = e.name.slice(0, i);
      if (!names.has(dir)) out.push({ name: dir, type: "directory", size: 0 });
      names.add(dir);
    }
  return out;
}

async function list(bytes: Uint8Array): Promise<TarEntry[]> {
  const out: TarEntry[] = [];
  for await (const e of tarEntries(streamOf(bytes), { maxBytes: CAP })) out.push(e);
  return out;
}

beforeAll(async () => {
  await requireDocker();
  await ensureTestImages();
  const made = await docker("create", "--label", `com.docker.compose.project=${project}`, TEST_IMAGES.busybox, "true");
  if (made.code !== 0) throw new Error(made.out);
  container = made.stdout;
}, 120_000);

afterAll(() => removeProject(project));

describe("the engine reads what the reader accepted", () => {
  it("extracts every spelling into the entries the reader listed, and writes back a tar the reader accepts", async () => {
    const archive = gzip(spellings());
    const listed = withParents((await list(archive)).map(norm)).sort(byName);
    const passed = await Bun.readableStreamToBytes(checkedTar(streamOf(archive), { maxBytes: CAP }));
    const put = Bun.spawn(["docker", "cp", "-", `${container}:/tmp`], { stdin: passed, stderr: "pipe" });
    const putCode = await put.exited;
    expect({ putCode, err: await new Response(put.stderr).text() }).toEqual({ putCode: 0, err: "" });

    const got = Bun.spawn(["docker", "cp", `${container}:/tmp/spell`, "-"], { stdout: "pipe" });
    const back = new Uint8Array(await new Response(got.stdout).arrayBuffer());
    expect(await got.exited).toBe(0);
    const engine: Array<{ name: string; type: string; size: number }> = (await list(back)).map(norm).sort(byName);
    expect(engine).toEqual(listed);
    expect(engine.find((e) => e.name === "spell/pax-size")?.size).toBe(600);
    expect(engine.find((e) => e.name === "spell/b256")?.size).toBe(5);
    expect(engine.find((e) => e.name === "spell/old-dir")?.type).toBe("directory");
    expect(engine.find((e) => e.name === "spell/ustar-prefix/spell")?.size).toBe(7);
    expect(engine.find((e) => e.name === "spell/version/vx")?.size).toBe(2);
  }, 60_000);
});
