/**
 * The hostile-archive corpus: every entry a restore refuses, spelled in ustar, pax (`path=` over a benign name) and
 * GNU long names, in plain tar and tar.gz, fed in odd chunk sizes. Each is refused naming the entry and the rule, and
 * the pass-through form hands on only the benign entry before it: real GNU tar extracting that output writes nothing
 * of the hostile entry.
 */
import { describe, expect, it } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { ArchiveRefused, checkedTar, vetArchive } from "../../../../../src/modules/backups/archive/vet";
import { volumeShape } from "../../../../../src/modules/backups/strategies/volume-layout";
import { concat, END, gnuLong, gzip, header, member, pax, paxRaw, streamOf, tar } from "../../../../helpers/tar-corpus";
import { tempDir } from "../../../../helpers/tmp";

const CAP = 1024 ** 3;
const enc = new TextEncoder();
const b256 = (...tail: number[]) => new Uint8Array([0x80, ...new Array(11 - tail.length).fill(0), ...tail]);

/** [what, archive body (without the end marker unless `raw`), refused entry (null: the archive), rule]. */
/** `passes`: bytes of an accepted entry after the benign one that may pass on (a body found short only at its end). */
type Case = { what: string; parts: Uint8Array[]; entry: string | null; rule: string; raw?: boolean; passes?: number };

/** What the Docker engine extracted as "../../not-a-prefix/gnu-times" (found by the engine differential). */
function gnuTimesAsPrefix(): Uint8Array {
  const h = header({ name: "gnu-times", format: "gnu", size: 1 });
  h.set(enc.encode("../../not-a-prefix"), 345);
  return concat(resum(h), new Uint8Array(512));
}

/** A header with another ustar version field (Go takes the prefix under the magic alone). */
function withVersion(m: Uint8Array, version: string): Uint8Array {
  const h = m.slice(0, 512);
  h.set(enc.encode(version), 263);
  return concat(resum(h), m.subarray(512));
}

/** Recompute a header's checksum after poking a field. */
function resum(h: Uint8Array): Uint8Array {
  const b = h.slice();
  b.fill(0x20, 148, 156);
  let sum = 0;
  for (const v of b) sum += v;
  b.set(enc.encode(`${sum.toString(8).padStart(6, "0")}\0 `), 148);
  return b;
}

const longDots = `${"a/".repeat(60)}${"../".repeat(61)}x`;

const CASES: Case[] = [
  // names: ustar, pax and GNU long name spellings
  { what: "absolute path", parts: [member({ name: "/etc/passwd" }, "x")], entry: "/etc/passwd", rule: "absolute path" },
  { what: "parent segment", parts: [member({ name: "../x" }, "x")], entry: "../x", rule: "parent directory segment" },
  { what: "parent inside", parts: [member({ name: "a/../../x" }, "x")], entry: "a/../../x", rule: "parent directory segment" },
  { what: "dot then parent", parts: [member({ name: "./../x" }, "x")], entry: "./../x", rule: "parent directory segment" },
  {
    what: "parent in a directory",
    parts: [member({ name: "../d/", type: "5" })],
    entry: "../d/",
    rule: "parent directory segment",
  },
  {
    what: "ustar prefix with ..",
    parts: [member({ name: "passwd", prefix: "../etc" }, "x")],
    entry: "../etc/passwd",
    rule: "parent directory segment",
  },
  {
    what: "ustar prefix absolute",
    parts: [member({ name: "passwd", prefix: "/etc" }, "x")],
    entry: "/etc/passwd",
    rule: "absolute path",
  },
  {
    what: "backslash parent",
    parts: [member({ name: "a\\..\\..\\x" }, "x")],
    entry: "a\\..\\..\\x",
    rule: "parent directory segment",
  },
  {
    what: "drive letter",
    parts: [member({ name: "C:\\Windows\\x" }, "x")],
    entry: "C:\\Windows\\x",
    rule: "absolute path (drive letter)",
  },
  {
    what: "pax path .. over a benign name",
    parts: [pax({ path: "../x" }), member({ name: "x" }, "x")],
    entry: "../x",
    rule: "parent directory segment",
  },
  {
    what: "pax path absolute",
    parts: [pax({ path: "/etc/passwd" }), member({ name: "passwd" }, "x")],
    entry: "/etc/passwd",
    rule: "absolute path",
  },
  {
    what: "pax path a/../../x",
    parts: [pax({ path: "a/../../x" }), member({ name: "x" }, "x")],
    entry: "a/../../x",
    rule: "parent directory segment",
  },
  {
    what: "benign pax path over a hostile name",
    parts: [pax({ path: "ok" }), member({ name: "../x" }, "x")],
    entry: "ok",
    rule: "parent directory segment",
  },
  {
    what: "GNU long name with ..",
    parts: [gnuLong(longDots), member({ name: "a".repeat(100), format: "gnu" }, "x")],
    entry: longDots,
    rule: "parent directory segment",
  },
  {
    what: "GNU long name absolute",
    parts: [gnuLong(`/${"a".repeat(200)}`), member({ name: "a", format: "gnu" }, "x")],
    entry: `/${"a".repeat(200)}`,
    rule: "absolute path",
  },
  // NUL and empty names
  { what: "NUL inside a ustar name", parts: [member({ name: enc.encode("a\0../../x") }, "x")], entry: "a", rule: "NUL in name" },
  {
    what: "NUL inside a ustar prefix",
    parts: [member({ name: "x", prefix: enc.encode("a\0/..") }, "x")],
    entry: "a/x",
    rule: "NUL in name",
  },
  {
    what: "NUL inside a pax path",
    parts: [pax({ path: "a\0/../../x" }), member({ name: "x" }, "x")],
    entry: "a\0/../../x",
    rule: "NUL in name",
  },
  {
    what: "NUL inside a GNU long name",
    parts: [gnuLong(enc.encode("a\0../x")), member({ name: "x", format: "gnu" }, "x")],
    entry: "a",
    rule: "NUL in name",
  },
  { what: "empty name", parts: [member({ name: "" }, "x")], entry: "", rule: "empty name" },
  {
    what: "empty pax path",
    parts: [pax({ path: "" }), member({ name: "x" }, "x")],
    entry: "PaxHeaders/x",
    rule: "empty pax path",
  },
  // links, devices, fifos, unknown types: in ustar, under a pax path and under a GNU long name
  { what: "symlink x -> /etc", parts: [member({ name: "x", type: "2", linkname: "/etc" })], entry: "x", rule: "symlink" },
  {
    what: "symlink with a harmless target",
    parts: [member({ name: "x", type: "2", linkname: "y" })],
    entry: "x",
    rule: "symlink",
  },
  {
    what: "symlink under a pax path",
    parts: [pax({ path: "link", linkpath: "/etc" }), member({ name: "l", type: "2" })],
    entry: "link",
    rule: "symlink",
  },
  {
    what: "symlink under a GNU long name",
    parts: [gnuLong("s".repeat(150)), gnuLong("/etc", "K"), member({ name: "s", type: "2", format: "gnu" })],
    entry: "s".repeat(150),
    rule: "symlink",
  },
  { what: "hardlink", parts: [member({ name: "h", type: "1", linkname: "benign.txt" })], entry: "h", rule: "hardlink" },
  {
    what: "hardlink to /etc/shadow",
    parts: [member({ name: "h", type: "1", linkname: "/etc/shadow" })],
    entry: "h",
    rule: "hardlink",
  },
  { what: "character device", parts: [member({ name: "null", type: "3" })], entry: "null", rule: "character device" },
  { what: "block device", parts: [member({ name: "sda", type: "4" })], entry: "sda", rule: "block device" },
  { what: "fifo", parts: [member({ name: "p", type: "6" })], entry: "p", rule: "fifo" },
  {
    what: "fifo under a pax path",
    parts: [pax({ path: "pipe" }), member({ name: "p", type: "6" })],
    entry: "pipe",
    rule: "fifo",
  },
  { what: "contiguous file", parts: [member({ name: "c", type: "7" }, "x")], entry: "c", rule: "contiguous file" },
  { what: "GNU sparse type", parts: [member({ name: "s", type: "S", format: "gnu" }, "x")], entry: "s", rule: "sparse file" },
  { what: "volume label", parts: [member({ name: "label", type: "V", format: "gnu" })], entry: "label", rule: "volume label" },
  { what: "unknown type Z", parts: [member({ name: "z", type: "Z" }, "x")], entry: "z", rule: 'unknown entry type "Z"' },
  {
    what: "pax sparse keys",
    parts: [pax({ "GNU.sparse.major": "1", "GNU.sparse.minor": "0" }), member({ name: "f" }, "x")],
    entry: "PaxHeaders/x",
    rule: "sparse file",
  },
  // fields that would let readers frame or place the entry differently
  {
    what: "link target on a regular file",
    parts: [member({ name: "f", linkname: "/etc/passwd" }, "x")],
    entry: "f",
    rule: "link target on a non-link entry",
  },
  {
    what: "pax linkpath on a regular file",
    parts: [pax({ linkpath: "/etc" }), member({ name: "f" }, "x")],
    entry: "f",
    rule: "link target on a non-link entry",
  },
  {
    what: "GNU long link on a regular file",
    parts: [gnuLong("/etc", "K"), member({ name: "f", format: "gnu" }, "x")],
    entry: "f",
    rule: "link target on a non-link entry",
  },
  {
    what: "directory with data",
    parts: [member({ name: "d/", type: "5", size: 512 }), new Uint8Array(512)],
    entry: "d/",
    rule: "directory with data",
  },
  {
    what: "regular file named like a directory",
    parts: [member({ name: "f/" }, "x")],
    entry: "f/",
    rule: "file name ends with a slash",
  },
  {
    what: "global pax header setting path",
    parts: [pax({ path: "../x" }, "g"), member({ name: "x" }, "x")],
    entry: "PaxHeaders/x",
    rule: "global pax header sets path",
  },
  {
    what: "global pax header setting size",
    parts: [pax({ size: "0" }, "g"), member({ name: "x" }, "x")],
    entry: "PaxHeaders/x",
    rule: "global pax header sets size",
  },
  {
    what: "repeated pax path key",
    parts: [paxRaw("9 path=a\n13 path=../x\n"), member({ name: "x" }, "x")],
    entry: "PaxHeaders/x",
    rule: "repeated pax path",
  },
  {
    what: "two pax headers for one entry",
    parts: [pax({ path: "a" }), pax({ path: "../x" }), member({ name: "x" }, "x")],
    entry: "PaxHeaders/x",
    rule: "repeated extended header",
  },
  {
    what: "two GNU long names for one entry",
    parts: [gnuLong("a"), gnuLong("../x"), member({ name: "x", format: "gnu" }, "x")],
    entry: "././@LongLink",
    rule: "repeated extended header",
  },
  {
    what: "malformed pax record",
    parts: [paxRaw("5 path=a\n"), member({ name: "x" }, "x")],
    entry: "PaxHeaders/x",
    rule: "malformed pax record length",
  },
  {
    what: "pax record without =",
    parts: [paxRaw("9 pathxa\n"), member({ name: "x" }, "x")],
    entry: "PaxHeaders/x",
    rule: "malformed pax record",
  },
  {
    what: "extended header over 64 KiB",
    parts: [member({ name: "././@LongLink", type: "L", format: "gnu" }, "a".repeat(70_000))],
    entry: "././@LongLink",
    rule: "extended header over 64 KiB",
  },
  {
    what: "GNU header whose time fields Go reads as a prefix",
    parts: [gnuTimesAsPrefix()],
    entry: "gnu-times",
    rule: "malformed gnu time fields (go reads them as a name prefix)",
  },
  {
    what: "ustar prefix with a version other than 00",
    parts: [withVersion(member({ name: "x", prefix: "../.." }, "x"), "  ")],
    entry: "../../x",
    rule: "parent directory segment",
  },
  {
    what: "GNU long name and pax path on one entry",
    parts: [gnuLong("pp"), pax({ path: "other" }), member({ name: "x" }, "x")],
    entry: "other",
    rule: "both a gnu long name and a pax path",
  },
  // checksums, numbers, truncation
  {
    what: "bad checksum",
    parts: [concat(header({ name: "x", size: 1, badChecksum: true }), new Uint8Array(512))],
    entry: "x",
    rule: "bad header checksum",
  },
  {
    what: "size overflowing 2^53 (base-256)",
    parts: [header({ name: "big", sizeField: b256(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff) })],
    entry: "big",
    rule: "bad size field: number field overflows",
  },
  {
    what: "negative size (base-256)",
    parts: [header({ name: "neg", sizeField: new Uint8Array(12).fill(0xff) })],
    entry: "neg",
    rule: "bad size field: negative number",
  },
  {
    what: "garbage in the size field",
    parts: [header({ name: "g", sizeField: enc.encode("0000000012x\0") })],
    entry: "g",
    rule: "bad size field: malformed number field",
  },
  {
    what: "pax size overflowing",
    parts: [pax({ size: "99999999999999999999" }), member({ name: "x" }, "x")],
    entry: "x",
    rule: "pax size overflows",
  },
  {
    what: "entry larger than the cap",
    parts: [header({ name: "huge", sizeField: b256(1, 0, 0, 0, 0, 0) })],
    entry: "huge",
    rule: `entry larger than the cap of ${CAP} bytes`,
  },
  { what: "truncated header", parts: [header({ name: "y" }).subarray(0, 300)], entry: null, rule: "truncated header", raw: true },
  {
    what: "truncated body",
    parts: [header({ name: "cut", size: 5000 }), new Uint8Array(1024)],
    entry: "cut",
    rule: "truncated entry data",
    raw: true,
    passes: 1536,
  },
  {
    what: "truncated extended header",
    parts: [header({ name: "././@LongLink", type: "L", size: 3000, format: "gnu" }), new Uint8Array(512)],
    entry: "././@LongLink",
    rule: "truncated extended header",
    raw: true,
  },
  { what: "no end-of-archive marker", parts: [], entry: null, rule: "truncated archive: no end-of-archive marker", raw: true },
  {
    what: "half an end marker",
    parts: [new Uint8Array(512)],
    entry: null,
    rule: "truncated archive: no end-of-archive marker",
    raw: true,
  },
  {
    what: "extended header without an entry",
    parts: [pax({ path: "a" })],
    entry: "PaxHeaders/x",
    rule: "extended header without an entry",
  },
  {
    what: "a lone zero block before more entries",
    parts: [new Uint8Array(512), member({ name: "../x" }, "x")],
    entry: null,
    rule: "a lone zero block before more entries",
  },
];

const BENIGN = member({ name: "benign.txt" }, "fine\n");

/** The archive of a case: a benign entry first (so the pass-through has something to pass), then the hostile one. */
const archiveOf = (c: Case) => (c.raw ? concat(BENIGN, ...c.parts) : tar(BENIGN, ...c.parts));

async function refusal(p: Promise<unknown>): Promise<ArchiveRefused> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ArchiveRefused) return e;
    throw e;
  }
  throw new Error("accepted");
}

/** Read a stream to its end or error: the bytes it passed on, and the error. */
async function drain(s: ReadableStream<Uint8Array>): Promise<{ bytes: Uint8Array; error: unknown }> {
  const got: Uint8Array[] = [];
  const r = s.getReader();
  try {
    for (;;) {
      const { done, value } = await r.read();
      if (done) return { bytes: concat(...got), error: null };
      got.push(value);
    }
  } catch (e) {
    return { bytes: concat(...got), error: e };
  }
}

describe.each([
  ["tar", (b: Uint8Array) => b],
  ["tar.gz", gzip],
])("hostile %s", (_kind, encode) => {
  it.each(CASES)("refuses: $what", async (c) => {
    const bytes = encode(archiveOf(c));
    for (const chunk of [1000, 7, 65536]) {
      const e = await refusal(vetArchive(streamOf(bytes, chunk), { maxBytes: CAP }));
      expect({ entry: e.entry, rule: e.rule, status: e.status }).toEqual({ entry: c.entry, rule: c.rule, status: 400 });
    }
  });

  it.each(CASES)("passes on nothing of it: $what", async (c) => {
    const whole = archiveOf(c);
    const { bytes, error } = await drain(checkedTar(streamOf(encode(whole), 333), { maxBytes: CAP }));
    expect(error).toBeInstanceOf(ArchiveRefused);
    expect((error as ArchiveRefused).rule).toBe(c.rule);
    // a prefix of the archive that stops at the end of the benign entry: not one byte of the hostile one
    expect(bytes.length).toBeLessThanOrEqual(BENIGN.length + (c.passes ?? 0));
    expect(bytes).toEqual(whole.subarray(0, bytes.length));
  });
});

// a root-level archive (`tar -C dir -c .`) is vetted the same, its layout gathered as it is read (and used only when
// the whole archive was accepted)
const ROOT = concat(member({ name: "./", type: "5" }), member({ name: "./benign.txt" }, "fine\n"));

describe.each([
  ["tar", (b: Uint8Array) => b],
  ["tar.gz", gzip],
])("hostile %s in a root-level archive", (_kind, encode) => {
  it.each(CASES)("refuses it with the layout gathered, passing on nothing of it: $what", async (c) => {
    const { add } = volumeShape();
    const whole = c.raw ? concat(ROOT, ...c.parts) : tar(ROOT, ...c.parts);
    const e = await refusal(vetArchive(streamOf(encode(whole), 1000), { maxBytes: CAP, onEntry: add }));
    expect({ entry: e.entry, rule: e.rule }).toEqual({ entry: c.entry, rule: c.rule });
    const { bytes, error } = await drain(checkedTar(streamOf(encode(whole), 333), { maxBytes: CAP }));
    expect((error as ArchiveRefused).rule).toBe(c.rule);
    expect(bytes.length).toBeLessThanOrEqual(ROOT.length + (c.passes ?? 0));
    expect(bytes).toEqual(whole.subarray(0, bytes.length));
  });
});

describe("messages", () => {
  it("names the entry and the rule in one line", async () => {
    const e = await refusal(vetArchive(streamOf(tar(member({ name: "../etc/passwd" }, "x"))), { maxBytes: CAP }));
    expect(e.message).toBe('archive entry "../etc/passwd": parent directory segment');
  });

  it("escapes control characters and cuts long names", async () => {
    const e = await refusal(
      vetArchive(streamOf(tar(pax({ path: `/\n${"a".repeat(500)}` }), member({ name: "x" }))), { maxBytes: CAP }),
    );
    expect(e.message).toStartWith('archive entry "/\\x0aaaa');
    expect(e.message).toContain("…");
    expect(e.message.length).toBeLessThan(220);
  });
});

describe("what GNU tar extracts from the pass-through output", () => {
  it.each(CASES.filter((c) => !c.raw))("writes only the benign file: $what", async (c) => {
    const dir = tempDir("sundeck-archive-");
    const { bytes } = await drain(checkedTar(streamOf(archiveOf(c), 512), { maxBytes: CAP }));
    expect(bytes).toEqual(BENIGN);
    // the stream errored after the benign entry; what reached tar before that is a complete archive but for the end
    const proc = Bun.spawn(["tar", "-x", "-C", dir, "-f", "-"], { stdin: concat(bytes, END), stderr: "pipe" });
    expect(await proc.exited).toBe(0);
    expect(readdirSync(dir)).toEqual(["benign.txt"]);
    expect(await Bun.file(join(dir, "benign.txt")).text()).toBe("fine\n");
  });
});
