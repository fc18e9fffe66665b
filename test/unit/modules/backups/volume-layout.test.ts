/**
 * The layout of an uploaded volume archive, from its names as the vetting pass reads them: a root archive (some name
 * `.` or `./...`) goes into the service's only mount, one without such a name is read per mount only when every
 * top-level name is one of the service's mounts, and every other case is a 400 saying what does not fit.
 */
import { describe, expect, it } from "bun:test";
import { vetArchive } from "../../../../src/modules/backups/archive/vet";
import { volumeShape, volumeUpload } from "../../../../src/modules/backups/strategies/volume-layout";
import type { BackupContainer } from "../../../../src/modules/backups/types";
import { member, streamOf, tar } from "../../../helpers/tar-corpus";

const container = (...destinations: string[]): BackupContainer => ({
  id: "id-web",
  name: "sundeck-shop-web-1",
  service: "web",
  image: "busybox",
  env: [],
  mounts: destinations.map((destination) => ({ type: "volume", source: "", destination })),
});

/** An archive of these names: a trailing slash or `.` is a directory, `file:` before a name a file whatever it is. */
const archive = (...names: string[]) =>
  tar(
    ...names.map((name) =>
      name.startsWith("file:")
        ? member({ name: name.slice(5) }, "x")
        : name.endsWith("/") || name === "."
          ? member({ name, type: "5" })
          : member({ name }, "x"),
    ),
  );

/** The layout `volumeUpload` gives an archive of `names` for `c`, or its 400's line. */
async function layout(names: string[], c: BackupContainer): Promise<{ mount?: string } | string> {
  const { shape, add } = volumeShape();
  await vetArchive(streamOf(archive(...names)), { maxBytes: 1 << 20, onEntry: add });
  try {
    return volumeUpload(shape, c);
  } catch (e) {
    return (e as Error & { reason?: string }).reason ?? (e as Error).message;
  }
}

describe("the layout of an uploaded volume archive", () => {
  it.each([
    ["tar -C dir -c .", ["./", "./a.txt", "./sub/", "./sub/b.txt"], ["/data"], { mount: "/data" }],
    ["a tar of ./* (no root entry)", ["./a.txt", "./sub/"], ["/data"], { mount: "/data" }],
    ["Python's tarfile of .", [".", "./a.txt"], ["/var/lib/data"], { mount: "/var/lib/data" }],
    ["names with ./ and without", ["./a.txt", "data/b.txt"], ["/data"], { mount: "/data" }],
    ["Sundeck's own, one mount", ["data/", "data/a.txt"], ["/data"], {}],
    ["Sundeck's own, two mounts", ["config/", "config/c", "var_lib_data/", "var_lib_data/d"], ["/config", "/var/lib/data"], {}],
    ["Sundeck's own, one of two mounts", ["config/", "config/c"], ["/config", "/data"], {}],
    ["Sundeck's own, a file bind mount", ["etc_app.conf"], ["/etc/app.conf"], {}],
    ["an empty archive", [], ["/data"], {}],
  ] as const)("reads %s", async (_what, names, mounts, want) => {
    expect(await layout([...names], container(...mounts))).toEqual(want);
  });

  it.each([
    [
      "a root archive for several mounts",
      ["./", "./a.txt"],
      ["/data", "/config"],
      "the archive holds files at its root (names start with ./) and sundeck-shop-web-1 has several mounts: put each mount's files under its directory (config/ for /config, data/ for /data)",
    ],
    [
      "names that are no mount and not ./",
      ["a.txt", "sub/", "sub/b.txt"],
      ["/data"],
      'the archive\'s top-level "a.txt", "sub" match no mount of sundeck-shop-web-1 (data/ for /data) and its names do not start with ./: make an archive of one mount\'s files with tar -C DIR -c .',
    ],
    [
      "Sundeck's archive of other mounts",
      ["var_lib_mysql/", "var_lib_mysql/ibdata1"],
      ["/data"],
      "the archive's top-level \"var_lib_mysql\" match no mount of sundeck-shop-web-1 (data/ for /data) and its names do not start with ./: make an archive of one mount's files with tar -C DIR -c .",
    ],
    ["a root that is a file", ["file:."], ["/data"], 'archive entry ".": the archive\'s root is not a directory'],
    ["no mount at all", ["./a.txt"], [], "sundeck-shop-web-1 has no named volumes or bind mounts to restore into"],
  ] as const)("refuses %s with a 400 saying why", async (_what, names, mounts, line) => {
    expect(await layout([...names], container(...mounts))).toBe(line);
  });

  it("names at most five strays, and an archive of more top-level names than any service has mounts is not per mount", async () => {
    const many = Array.from({ length: 300 }, (_, i) => `f${i}`);
    const line = await layout(many, container("/data"));
    expect(line).toStartWith('the archive\'s top-level "f0", "f1", "f2", "f3", "f4", … match no mount');
  });
});
