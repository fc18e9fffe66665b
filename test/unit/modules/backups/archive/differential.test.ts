/**
 * Accepted inputs, held against the reference readers: archives of one directory tree (long names, unicode names,
 * spaces, empty files, an empty directory, nested directories, sizes around a block) written by GNU tar in ustar, pax
 * and gnu formats and by Python's tarfile in the same three, plain and gzipped, are all accepted, and the reader lists
 * exactly the entries (names, sizes, types, in order) that `tar -tv` and Python's tarfile list.
 */
import { beforeAll, describe, expect, it } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkedTar, type TarEntry, tarEntries, vetArchive } from "../../../../../src/modules/backups/archive/vet";
import { tempDir } from "../../../../helpers/tmp";

type Listed = { name: string; size: number; type: string };

let base: string;
const CAP = 1024 ** 3;

/** The tree: `common` fits ustar (names split into prefix and name), `long` only pax and gnu. */
function makeTree(root: string, long: boolean): void {
  const f = (p: string, data: string | Uint8Array = "") => {
    mkdirSync(join(root, p, ".."), { recursive: true });
    writeFileSync(join(root, p), data);
  };
  f("empty.txt");
  f("small.txt", "hello\n");
  f("with space.txt", "space\n");
  f("block.bin", new Uint8Array(512).fill(7));
  f("block-plus-one.bin", new Uint8Array(513).fill(8));
  f(
    "big.bin",
    new Uint8Array(1024 * 1024 + 1).map((_, i) => (i * 31) & 0xff),
  );
  f("nested/a/b/c/d/deep.txt", "deep\n");
  f("ünïcödé-文件-😀.txt", "unicode\n");
  f("дир/файл.txt", "cyrillic\n");
  f(`${"n".repeat(100)}`, "exactly a hundred\n");
  f(`${"d".repeat(70)}/${"e".repeat(70)}/${"f".repeat(90)}.txt`, "ustar long\n");
  mkdirSync(join(root, "emptydir"), { recursive: true });
  if (long) {
    f(`${"L".repeat(200)}/${"M".repeat(150)}/${"é".repeat(60)}.txt`, "very long\n");
    f(`${"x".repeat(180)}`, "long single name\n");
  }
}

const pyCache = new Map<string, Listed[]>();

/** Python's tarfile listing of an archive (read once per archive). */
function pythonList(archive: string): Listed[] {
  const hit = pyCache.get(archive);
  if (hit) return hit;
  const code = `
import json, sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    print(json.dumps([{"name": m.name, "size": m.size, "type": "directory" if m.isdir() else "file" if m.isfile() else m.type.decode()} for m in t]))
`;
  const p = Bun.spawnSync(["python3", "-c", code, archive]);
  if (p.exitCode !== 0) throw new Error(p.stderr.toString());
  const listed: Listed[] = JSON.parse(p.stdout.toString());
  pyCache.set(archive, listed);
  return listed;
}

/** GNU tar's `-tv` listing (numeric owners, literal names). */
function gnuList(archive: string): Listed[] {
  const p = Bun.spawnSync(["tar", "--numeric-owner", "--quoting-style=literal", "-tvf", archive], {
    env: { ...process.env, LC_ALL: "C.UTF-8" },
  });
  if (p.exitCode !== 0) throw new Error(p.stderr.toString());
  return p.stdout
    .toString()
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const m = /^(\S+) (\S+)\s+(\d+) (\S+) (\S+) (.*)$/.exec(line);
      if (!m) throw new Error(`unparsed tar -tv line: ${line}`);
      return { name: m[6], size: Number(m[3]), type: m[1][0] === "d" ? "directory" : m[1][0] === "-" ? "file" : m[1][0] };
    });
}

async function ours(archive: string): Promise<TarEntry[]> {
  const out: TarEntry[] = [];
  for await (const e of tarEntries(Bun.file(archive).stream(), { maxBytes: CAP })) out.push(e);
  return out;
}

const ARCHIVES: Array<{ writer: string; format: string; gz: boolean }> = [];
for (const writer of ["gnu-tar", "python"])
  for (const format of ["ustar", "pax", "gnu"]) for (const gz of [false, true]) ARCHIVES.push({ writer, format, gz });

const fileOf = (a: (typeof ARCHIVES)[number]) => join(base, `${a.writer}-${a.format}.tar${a.gz ? ".gz" : ""}`);

beforeAll(() => {
  base = tempDir("sundeck-tar-diff-");
  makeTree(join(base, "short", "tree"), false);
  makeTree(join(base, "long", "tree"), true);
  for (const a of ARCHIVES) {
    const src = join(base, a.format === "ustar" ? "short" : "long");
    const out = fileOf(a);
    if (a.writer === "gnu-tar") {
      const p = Bun.spawnSync(["tar", `--format=${a.format}`, a.gz ? "-czf" : "-cf", out, "-C", src, "tree"]);
      if (p.exitCode !== 0) throw new Error(`tar: ${p.stderr}`);
    } else {
      const fmt = { ustar: "USTAR_FORMAT", pax: "PAX_FORMAT", gnu: "GNU_FORMAT" }[a.format];
      const code = `
import sys, tarfile
with tarfile.open(sys.argv[1], "w:gz" if sys.argv[3] == "1" else "w", format=tarfile.${fmt}) as t:
    t.add(sys.argv[2], arcname="tree")
`;
      const p = Bun.spawnSync(["python3", "-c", code, out, join(src, "tree"), a.gz ? "1" : "0"]);
      if (p.exitCode !== 0) throw new Error(`python: ${p.stderr}`);
    }
  }
}, 60_000);

describe.each(ARCHIVES)("$writer --format=$format gz=$gz", (a) => {
  it("is accepted, every entry counted", async () => {
    const r = await vetArchive(Bun.file(fileOf(a)).stream(), { maxBytes: CAP });
    expect(r.entries).toBe(pythonList(fileOf(a)).length);
    expect(r.entries).toBeGreaterThan(15);
  });

  it("lists what GNU tar lists", async () => {
    const mine: Listed[] = (await ours(fileOf(a))).map((e) => ({ name: e.name, size: e.size, type: e.type }));
    expect(mine).toEqual(gnuList(fileOf(a)));
    // the names that need the format's extension are in there (prefix for ustar, pax records or L for the others)
    const longest = Math.max(...mine.map((e) => new TextEncoder().encode(e.name).length));
    expect(longest).toBeGreaterThan(a.format === "ustar" ? 200 : 400);
  });

  it("lists what Python's tarfile lists", async () => {
    const mine: Listed[] = (await ours(fileOf(a))).map((e) => ({ name: e.name.replace(/\/$/, ""), size: e.size, type: e.type }));
    expect(mine).toEqual(pythonList(fileOf(a)));
  });

  it("passes on a tar GNU tar reads the same", async () => {
    const out = join(base, `${a.writer}-${a.format}-${a.gz}.passed.tar`);
    await Bun.write(out, new Response(checkedTar(Bun.file(fileOf(a)).stream(), { maxBytes: CAP })));
    expect(gnuList(out)).toEqual(gnuList(fileOf(a)));
    // byte for byte the original tar, up to and including the end-of-archive marker (record padding dropped)
    const passed = new Uint8Array(await Bun.file(out).arrayBuffer());
    const raw = Bun.file(fileOf(a)).bytes();
    const original = a.gz ? Bun.gunzipSync(await raw) : await raw;
    expect(passed).toEqual(original.subarray(0, passed.length));
    expect(passed.subarray(-1024).every((b) => b === 0)).toBe(true);
  });
});
