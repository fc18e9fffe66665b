/**
 * The archive reader against its real consumer, the Docker engine's archive endpoints (Go's archive/tar): every
 * benign spelling the reader accepts is extracted by the engine into the entries the reader listed (names, types,
 * sizes), and the tar the engine writes back for that directory is itself accepted and lists the same entries.
 * A seeded fuzz mutates header fields of a benign archive (checksums fixed up): whatever the reader accepts, the
 * engine extracts into exactly the entries it listed. SUNDECK_FUZZ_SEED and SUNDECK_FUZZ_CASES change the run; SUNDECK_FUZZ_DUMP=<dir> keeps the archives that differ.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { posix } from "node:path";
import { ArchiveRefused, checkedTar, type TarEntry, tarEntries } from "../../../src/modules/backups/archive/vet";
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

/** A name as an extractor resolves it (`./a//b/` is `a/b`), with its type and size. */
const norm = (e: TarEntry) => ({ name: posix.normalize(e.name).replace(/^\.\/|\/$/g, ""), type: e.type, size: e.size });
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

/** Header fields the fuzz pokes: name, size, type, link name, magic, version, prefix (and GNU times), star trailer. */
const FIELDS: Array<[number, number]> = [
  [0, 100],
  [124, 12],
  [156, 1],
  [157, 100],
  [257, 6],
  [263, 2],
  [345, 155],
  [345, 24],
  [500, 12],
  [508, 4],
];
/** Bytes that mean something to some reader: NUL, separators, dots, digits, type letters, high bytes. */
const ALPHABET = [0, 0x2f, 0x2e, 0x61, 0x30, 0x37, 0x20, 0x5c, 0x80, 0xff, 0x35, 0x78, 0x4c, 0x67];

/** Bytes that mean something in pax records: digits, space, `=`, newline, separators, NUL. */
const PAX_ALPHABET = [0x30, 0x31, 0x32, 0x39, 0x20, 0x3d, 0x0a, 0x2f, 0x2e, 0, 0x61];

function fuzzBase(dir: string): Uint8Array {
  return tar(
    member({ name: `${dir}/`, type: "5" }),
    member({ name: `${dir}/a.txt` }, "hello"),
    member({ name: "b", prefix: `${dir}/pre` }, "pp"),
    pax({ path: `${dir}/paxname` }),
    member({ name: `${dir}/short` }, "x"),
    gnuLong(`${dir}/${"g".repeat(120)}`),
    member({ name: `${dir}/gg`, format: "gnu" }, "y"),
    member({ name: `${dir}/old`, type: "\0" }, "z"),
    member({ name: `${dir}/gnu-plain`, format: "gnu" }, "w"),
  );
}

describe("fuzz against the engine", () => {
  it("extracts exactly what the reader listed from every mutated archive it accepts", async () => {
    let seed = Number(process.env.SUNDECK_FUZZ_SEED ?? 20261127);
    const cases = Number(process.env.SUNDECK_FUZZ_CASES ?? 40);
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    let accepted = 0;
    const diffs: string[] = [];
    for (let i = 0; i < cases; i++) {
      const dir = `fz${i}`;
      const a = fuzzBase(dir);
      const headers: number[] = [];
      for (let off = 0; off + 512 <= a.length - 1024; off += 512) if (a[off + 257] === 0x75) headers.push(off);
      for (let m = 1 + rnd(3); m > 0; m--) {
        const off = headers[rnd(headers.length)];
        const [from, len] = FIELDS[rnd(FIELDS.length)];
        // scattered bytes, or a run from the field's start (a NUL-terminated field only changes from its start)
        const run = rnd(2) === 0;
        for (let k = 0, n = 1 + rnd(4); k < n; k++)
          a[off + from + (run ? k % len : rnd(len))] = ALPHABET[rnd(run ? ALPHABET.length - 1 : ALPHABET.length) + (run ? 1 : 0)];
        a.set(resum(a.subarray(off, off + 512)), off);
      }
      // now and then the records of the pax header and the GNU long name's data, where no checksum guards them
      if (rnd(3) === 0) {
        const special = headers.filter((off) => a[off + 156] === 0x78 || a[off + 156] === 0x4c);
        const off = special[rnd(special.length)] + 512;
        for (let k = 1 + rnd(3); k > 0; k--) a[off + rnd(40)] = PAX_ALPHABET[rnd(PAX_ALPHABET.length)];
      }
      let mine: TarEntry[];
      try {
        mine = await list(a);
      } catch (e) {
        if (e instanceof ArchiveRefused) continue;
        throw e;
      }
      accepted++;
      // extract into a fresh directory of the container, then read the whole of it back
      const home = `/tmp/case${i}`;
      const mk = Bun.spawn(["docker", "cp", "-", `${container}:/tmp`], { stdin: tar(member({ name: `case${i}/`, type: "5" })) });
      expect(await mk.exited).toBe(0);
      const passed = await Bun.readableStreamToBytes(checkedTar(streamOf(a), { maxBytes: CAP }));
      const put = Bun.spawn(["docker", "cp", "-", `${container}:${home}`], { stdin: passed, stderr: "pipe" });
      const putCode = await put.exited;
      const got = Bun.spawn(["docker", "cp", `${container}:${home}`, "-"], { stdout: "pipe" });
      const back = await list(new Uint8Array(await new Response(got.stdout).arrayBuffer()));
      const want = new Set(withParents(mine.map(norm)).map((e) => `case${i}/${e.name}`));
      want.add(`case${i}`);
      const engine = new Set(back.map((e) => norm(e).name));
      const extra = [...engine].filter((n) => !want.has(n));
      const missing = [...want].filter((n) => !engine.has(n));
      if ((putCode !== 0 || extra.length || missing.length) && process.env.SUNDECK_FUZZ_DUMP)
        await Bun.write(`${process.env.SUNDECK_FUZZ_DUMP}/case-${i}.tar`, a);
      if (putCode !== 0 || extra.length || missing.length)
        diffs.push(`case ${i}: put ${putCode} ${await new Response(put.stderr).text()} extra ${extra} missing ${missing}`);
    }
    expect(diffs).toEqual([]);
    // the mutations are not all refused: the fuzz really reaches the engine
    expect(accepted).toBeGreaterThan(cases / 5);
  }, 300_000);
});
