/** Short volume syntax and host paths parse as compose-go does, Windows cases included; composeHostPath refuses. */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: compose interpolation syntax appears in volume specs
/**
 * compose-go's test tables for the short volume syntax and host paths, ported (github.com/compose-spec/compose-go,
 * v2): format/volume_test.go (V), paths/windows_path_test.go (W), loader/paths_test.go and loader/loader_test.go (L).
 *
 * compose-go's ParseVolume does not depend on the platform, so its Windows cases hold on Linux as well: a source with
 * a drive letter (`C:\source`) is a bind whose source keeps the letter, and a lone `C:\path` is an anonymous volume's
 * target. What compose then does with such a host path on Linux (keeps `c:\x` as written, which Docker rejects) is
 * where composeHostPath refuses instead.
 *
 * Not ported: V TestVolumeStringer (ServiceVolumeConfig.String, which Sundeck does not have).
 */
import { describe, expect, it } from "bun:test";
import { parseMount } from "../../../src/compose/mounts";
import {
  cleanPath,
  composeHostPath,
  isFilePath,
  isWindowsAbs,
  joinPath,
  parseVolumeSpec,
  type VolumeSpec,
} from "../../../src/compose/volume-spec";

function spec(type: "bind" | "volume", source: string, target: string, readOnly = false, options: string[] = []): VolumeSpec {
  return { type, source, target, readOnly, options };
}

function refusal(text: string): string {
  try {
    parseVolumeSpec(text);
  } catch (e) {
    expect((e as { rule?: string }).rule).toBe("volume-spec");
    expect((e as { service?: string | null }).service).toBeNull();
    return (e as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be refused`);
}

describe("compose-go format/volume_test.go", () => {
  it.each([
    // TestParseVolumeAnonymousVolume
    ["/path", spec("volume", "", "/path")],
    ["/path/foo", spec("volume", "", "/path/foo")],
    // TestParseVolumeAnonymousVolumeWindows: the drive colon does not split
    ["C:\\path", spec("volume", "", "C:\\path")],
    ["Z:\\path\\foo", spec("volume", "", "Z:\\path\\foo")],
    // TestParseVolumeShortVolumes: one or two bytes are a target alone
    [".", spec("volume", "", ".")],
    ["/a", spec("volume", "", "/a")],
    // TestParseVolumeBindMount
    ["./foo:/target", spec("bind", "./foo", "/target")],
    ["~/thing:/target", spec("bind", "~/thing", "/target")],
    ["../other:/target", spec("bind", "../other", "/target")],
    ["/foo:/target", spec("bind", "/foo", "/target")],
    ["/home/user:/target", spec("bind", "/home/user", "/target")],
    // TestParseVolumeRelativeBindMountWindows: D:\path is a bind with a drive-letter source
    ["./foo:d:\\target", spec("bind", "./foo", "d:\\target")],
    ["~/thing:d:\\target", spec("bind", "~/thing", "d:\\target")],
    ["../other:d:\\target", spec("bind", "../other", "d:\\target")],
    ["D:\\path:d:\\target", spec("bind", "D:\\path", "d:\\target")],
    ["/home/user:d:\\target", spec("bind", "/home/user", "d:\\target")],
    // TestParseVolumeWithBindOptions, ...SELinuxShared, ...SELinuxPrivate, ...Windows
    ["/source:/target:slave", spec("bind", "/source", "/target", false, ["slave"])],
    ["/source:/target:ro,z", spec("bind", "/source", "/target", true, ["ro", "z"])],
    ["/source:/target:ro,Z", spec("bind", "/source", "/target", true, ["ro", "Z"])],
    ["C:\\source\\foo:D:\\target:ro,rprivate", spec("bind", "C:\\source\\foo", "D:\\target", true, ["ro", "rprivate"])],
    // TestParseVolumeWithInvalidVolumeOptions: ignored, not refused
    ["name:/target:bogus", spec("volume", "name", "/target", false, ["bogus"])],
    // TestParseVolumeWithVolumeOptions
    ["name:/target:nocopy", spec("volume", "name", "/target", false, ["nocopy"])],
    // TestParseVolumeWithReadOnly, TestParseVolumeWithRW
    ["./foo:/target:ro", spec("bind", "./foo", "/target", true, ["ro"])],
    ["/home/user:/target:ro", spec("bind", "/home/user", "/target", true, ["ro"])],
    ["./foo:/target:rw", spec("bind", "./foo", "/target", false, ["rw"])],
    ["/home/user:/target:rw", spec("bind", "/home/user", "/target", false, ["rw"])],
    // TestParseVolumeWindowsNamedPipe
    ["\\\\.\\pipe\\docker_engine:\\\\.\\pipe\\inside", spec("bind", "\\\\.\\pipe\\docker_engine", "\\\\.\\pipe\\inside")],
    // TestParseVolumeWithVariableDefaultValue: colons inside ${...} do not split
    ["/tmp:/tmp/${BUG_HERE:-DEFAULT}/path", spec("bind", "/tmp", "/tmp/${BUG_HERE:-DEFAULT}/path")],
    ["/tmp/${VAR:-default}:/target", spec("bind", "/tmp/${VAR:-default}", "/target")],
    ["/src/${SRC:-default}:/dst/${DST:-value}", spec("bind", "/src/${SRC:-default}", "/dst/${DST:-value}")],
    ["/tmp:/tmp/${VAR:-}/path", spec("bind", "/tmp", "/tmp/${VAR:-}/path")],
    ["/tmp:/tmp/${VAR:-default/path/value}/file", spec("bind", "/tmp", "/tmp/${VAR:-default/path/value}/file")],
    ["/tmp:/tmp/${VAR1:-val1}/${VAR2:-val2}/path", spec("bind", "/tmp", "/tmp/${VAR1:-val1}/${VAR2:-val2}/path")],
    ["/tmp:/tmp/${VAR:-default}/path:ro", spec("bind", "/tmp", "/tmp/${VAR:-default}/path", true, ["ro"])],
    ["/tmp:/tmp/${WORKS_AS_EXPECTED}/path", spec("bind", "/tmp", "/tmp/${WORKS_AS_EXPECTED}/path")],
    ["/tmp:/tmp/${VAR1:-default}/${VAR2}/path", spec("bind", "/tmp", "/tmp/${VAR1:-default}/${VAR2}/path")],
    ["/tmp:/tmp/${TIME:-12:30:45}/path", spec("bind", "/tmp", "/tmp/${TIME:-12:30:45}/path")],
    ["myvolume:/data/${VAR:-default}/path", spec("volume", "myvolume", "/data/${VAR:-default}/path")],
    ["/src:/target/${VAR:-default}/path:slave,ro", spec("bind", "/src", "/target/${VAR:-default}/path", true, ["slave", "ro"])],
    // TestParseVolumeWithVariableDefaultValueWindows
    ["C:\\source:D:\\target\\${VAR:-default}\\path", spec("bind", "C:\\source", "D:\\target\\${VAR:-default}\\path")],
    ["C:\\src\\${VAR:-default}:D:\\target", spec("bind", "C:\\src\\${VAR:-default}", "D:\\target")],
    ["C:\\source:D:\\${VAR:-default}\\path:ro", spec("bind", "C:\\source", "D:\\${VAR:-default}\\path", true, ["ro"])],
    // TestParseVolumeWithNestedBraces
    ["/tmp:/tmp/${VAR:-{default}}/path", spec("bind", "/tmp", "/tmp/${VAR:-{default}}/path")],
    ["/tmp:/tmp/path/${VAR:-default}", spec("bind", "/tmp", "/tmp/path/${VAR:-default}")],
    ["/tmp:/${VAR:-default}/path", spec("bind", "/tmp", "/${VAR:-default}/path")],
  ] as const)("%s", (text, expected) => {
    expect(parseVolumeSpec(text)).toEqual(expected);
  });

  it.each([
    // TestParseVolumeTooManyColons
    ["/foo:/foo:ro:foo", "too many colons"],
    // TestParseVolumeMissingSource
    [":foo", "empty section between colons"],
    ["/foo::ro", "empty section between colons"],
    // TestParseVolumeInvalidSections
    ["/foo::rw", "empty section between colons"],
    // TestParseVolumeInvalidEmptySpec
    ["", "empty volume spec"],
  ])("refuses %s: %s", (text, reason) => {
    expect(refusal(text)).toBe(`Bad Request: invalid volume spec ${JSON.stringify(text)}: ${reason}`);
  });

  // TestParseVolumeSplitCases (kept from VolumeSplitN): a source is found exactly when the split gives 2+ parts
  it.each([
    ["C:\\foo:d:", true],
    [":C:\\foo:d:", false],
    ["/foo:/bar:ro", true],
    ["C:\\foo\\:/foo", true],
    ["d:\\", false],
    ["d:", false],
    ["d:\\path", false],
    ["d:\\path with space", false],
    ["d:\\pathandmode:rw", true],
    ["c:\\:d:\\", true],
    ["c:\\windows\\:d:", true],
    ["c:\\windows:d:\\s p a c e", true],
    ["c:\\windows:d:\\s p a c e:RW", true],
    ["c:\\program files:d:\\s p a c e i n h o s t d i r", true],
    ["0123456789name:d:", true],
    ["MiXeDcAsEnAmE:d:", true],
    ["name:D:", true],
    ["name:D::rW", true],
    ["name:D::RW", true],
    ["c:/:d:/forward/slashes/are/good/too", true],
    ["c:\\Windows", false],
    ["c:\\Program Files (x86)", false],
    ["", false],
    [".", false],
    ["..\\", false],
    ["c:\\:..\\", true],
    ["c:\\:d:\\:xyzzy", true],
    ["/tmp/x/y:/foo/x/y", true],
  ])("%s has a source: %s", (text, hasSource) => {
    let source = "";
    try {
      source = parseVolumeSpec(text).source;
    } catch {
      // compose-go checks the source of the (partial) result even on error; an error leaves none here
    }
    expect(source !== "").toBe(hasSource);
  });

  it("TestIsFilePath: a letter followed by a non-colon is not a drive", () => {
    expect(isFilePath("a界")).toBe(false);
  });
});

describe("parseVolumeSpec: compose-go behaviour beyond its own tables", () => {
  // each expectation checked against compose-go's format.ParseVolume
  it.each([
    // one or two bytes, not characters: é is two bytes, 日 three
    ["é", spec("volume", "", "é")],
    ["日", spec("volume", "", "日")],
    ["ab", spec("volume", "", "ab")],
    ["abc", spec("volume", "", "abc")],
    // any Unicode letter is a drive letter
    ["é:/x:/y", spec("bind", "é:/x", "/y")],
    // a letter-colon is a drive in any section, not only the first
    ["/a:b:/c", spec("bind", "/a", "b:/c")],
    ["c:/x:/y:ro", spec("bind", "c:/x", "/y", true, ["ro"])],
    ["\\\\host\\share:/y", spec("bind", "\\\\host\\share", "/y")],
    ["vol:/y:ro,rw", spec("volume", "vol", "/y", false, ["ro", "rw"])],
    // an unclosed ${ swallows the rest and leaves the spec unread
    ["${a:b", spec("volume", "", "")],
    ["/x:${a:b", spec("bind", "/x", "")],
  ])("%s", (text, expected) => {
    expect(parseVolumeSpec(text)).toEqual(expected);
  });
});

describe("compose-go paths/windows_path_test.go: TestIsAbs", () => {
  const isabstests: [string, boolean][] = [
    ["", false],
    ["/", true],
    ["/usr/bin/gcc", true],
    ["..", false],
    ["/a/../bb", true],
    [".", false],
    ["./", false],
    ["lala", false],
  ];
  const winisabstests: [string, boolean][] = [
    ["C:\\", true],
    ["c\\", false],
    ["c::", false],
    ["c:", false],
    ["/", false],
    ["\\", false],
    ["\\Windows", false],
    ["c:a\\b", false],
    ["c:\\a\\b", true],
    ["c:/a/b", true],
    ["\\\\host\\share\\foo", true],
    ["//host/share/foo/bar", true],
  ];
  it.each([
    ...winisabstests,
    // none of the Unix cases is absolute for Windows: they have no volume
    ...isabstests.map(([p]): [string, boolean] => [p, false]),
    // all of them read as intended behind a drive letter
    ...isabstests.map(([p, abs]): [string, boolean] => [`c:${p}`, abs]),
  ])("isWindowsAbs(%s) is %s", (path, abs) => {
    expect(isWindowsAbs(path)).toBe(abs);
  });
});

describe("composeHostPath", () => {
  const base = "/srv/apps/web";

  // loader/paths_test.go and loader/loader_test.go: relative paths join the working directory, absolute ones stay
  it.each([
    ["./testdata", "/srv/apps/web/testdata"], // TestResolveBuildContextPaths, TestResolveAdditionalContexts
    [".", "/srv/apps/web"], // TestLoadBindMountWithSource
    ["/dir", "/dir"], // TestResolveAdditionalContexts abs_path
    ["/opt/data", "/opt/data"], // TestLoadWithExtends
    ["/z/some-dir", "/z/some-dir"], // TestLoadBindMountSourceIsWindowsAbsolute, forward-slashes
  ])("%s is %s", (source, path) => {
    expect(composeHostPath(source, base)).toEqual({ path });
  });

  // TestLoadBindMountSourceIsWindowsAbsolute: compose keeps these as written; on Linux Sundeck refuses them
  it.each(["z:\\", "Z:\\", "Z:\\some-dir"])("refuses the Windows path %s", (source) => {
    expect(composeHostPath(source, base)).toEqual({ refused: "Windows paths are not supported" });
  });

  // the windows_path_test.go table through composeHostPath
  it.each([
    ["C:\\", { refused: "Windows paths are not supported" }],
    ["c\\", { path: "/srv/apps/web/c\\" }],
    ["c::", { refused: "Windows paths are not supported" }],
    ["c:", { refused: "Windows paths are not supported" }],
    ["c:a\\b", { refused: "Windows paths are not supported" }],
    ["c:\\a\\b", { refused: "Windows paths are not supported" }],
    ["c:/a/b", { refused: "Windows paths are not supported" }],
    ["\\\\host\\share\\foo", { refused: "Windows paths are not supported" }],
    ["\\/host/share", { refused: "Windows paths are not supported" }],
    ["\\\\.\\pipe\\docker_engine", { refused: "Windows paths are not supported" }],
    ["é:/x", { refused: "Windows paths are not supported" }],
    // a Linux path however Windows reads it
    ["//host/share/foo/bar", { path: "/host/share/foo/bar" }],
    // a backslash is a file name character on Linux
    ["\\Windows", { path: "/srv/apps/web/\\Windows" }],
    ["lala", { path: "/srv/apps/web/lala" }],
  ] as const)("%s", (source, expected) => {
    expect(composeHostPath(source, base)).toEqual(expected);
  });

  it.each([
    ["~", "home directory paths are not allowed"],
    ["~/x", "home directory paths are not allowed"],
    ["~user/x", "home directory paths are not allowed"],
    ["/etc\0/x", "path contains a NUL byte"],
    ["./a\0", "path contains a NUL byte"],
  ])("refuses %s", (source, refused) => {
    expect(composeHostPath(source, base)).toEqual({ refused });
  });

  it.each([
    ["//etc//passwd/", "/etc/passwd"],
    ["/./etc/./", "/etc"],
    ["/srv/../etc", "/etc"],
    ["/../../etc", "/etc"],
    ["/", "/"],
    ["./a/../../x", "/srv/apps/x"],
    ["..", "/srv/apps"],
    ["a//b/./c/", "/srv/apps/web/a/b/c"],
    ["", "/srv/apps/web"],
  ])("cleans %s to %s", (source, path) => {
    expect(composeHostPath(source, base)).toEqual({ path });
  });
});

describe("cleanPath and joinPath (Go path.Clean, filepath.Join)", () => {
  it.each([
    ["", "."],
    [".", "."],
    ["a/../..", ".."],
    ["../../a/..", "../.."],
    ["a/b/../../../c", "../c"],
    ["//a", "/a"],
    ["/a/b/", "/a/b"],
  ])("cleanPath(%s) is %s", (path, clean) => {
    expect(cleanPath(path)).toBe(clean);
  });

  it("joins non-empty parts", () => {
    expect(joinPath("", "")).toBe("");
    expect(joinPath("", "a/")).toBe("a");
    expect(joinPath("/x", "", "../y")).toBe("/y");
  });
});

describe("parseMount", () => {
  it.each([
    ["./data:/data", { type: "bind", source: "./data", target: "/data" }],
    ["c:/x:/data", { type: "bind", source: "c:/x", target: "/data" }],
    ["C:\\x:/data", { type: "bind", source: "C:\\x", target: "/data" }],
    ["\\\\host\\share:/data", { type: "bind", source: "\\\\host\\share", target: "/data" }],
    ["db:/var/lib/db:ro", { type: "volume", source: "db", target: "/var/lib/db" }],
    ["/cache", { type: "anonymous", source: "", target: "/cache" }],
    ["db:/x/./y//z/", { type: "volume", source: "db", target: "/x/y/z" }],
    ["/a:${X:-1:2}", { type: "bind", source: "/a", target: "${X:-1:2}" }],
  ])("reads %s", (raw, mount) => {
    expect(parseMount(raw)).toEqual(mount as ReturnType<typeof parseMount>);
  });

  it("throws a volume-spec error where compose refuses the entry", () => {
    expect(() => parseMount("/a::/b")).toThrow("empty section between colons");
    expect(() => parseMount("/a:/b:ro:x")).toThrow("too many colons");
  });

  it("keeps the long syntax and judges an untyped source by compose's file-path rule", () => {
    expect(parseMount({ source: "c:\\x", target: "/y" })).toEqual({ type: "bind", source: "c:\\x", target: "/y" });
    expect(parseMount({ type: "bind", source: "/h", target: "/c" })).toEqual({ type: "bind", source: "/h", target: "/c" });
    expect(parseMount({ type: "volume", target: "/c" })).toEqual({ type: "anonymous", source: "", target: "/c" });
  });
});
