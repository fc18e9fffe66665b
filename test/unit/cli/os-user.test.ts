/** The name server-side commands record as their actor: the OS user, even where Bun's os.userInfo() answers "unknown". */
import { describe, expect, it } from "bun:test";
import { type OsUserSources, osUserName, passwdName } from "../../../src/cli/os-user";

const PASSWD =
  "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\nalice:x:1000:1000::/home/alice:/bin/sh\n";

const sources = (over: Partial<OsUserSources>): OsUserSources => ({
  userInfo: () => ({ username: "unknown", uid: 1000 }),
  passwd: () => PASSWD,
  env: {},
  uid: () => 1000,
  ...over,
});

describe("the operating-system user of a CLI command", () => {
  it("is the name os.userInfo() gives", () => {
    expect(osUserName(sources({ userInfo: () => ({ username: "carol", uid: 1000 }) }))).toBe("carol");
  });

  it("is looked up by uid in /etc/passwd when os.userInfo() says unknown, as Bun does for root", () => {
    expect(osUserName(sources({ userInfo: () => ({ username: "unknown", uid: 0 }), env: { USER: "mallory" } }))).toBe("root");
    expect(osUserName(sources({}))).toBe("alice");
  });

  it("falls back to $USER, then $LOGNAME, then the bare uid", () => {
    const noEntry = { userInfo: () => ({ username: "", uid: 4242 }), uid: () => 4242 };
    expect(osUserName(sources({ ...noEntry, env: { USER: "bob", LOGNAME: "robert" } }))).toBe("bob");
    expect(osUserName(sources({ ...noEntry, env: { LOGNAME: "robert" } }))).toBe("robert");
    expect(osUserName(sources({ ...noEntry, passwd: () => "" }))).toBe("uid 4242");
  });

  it("survives os.userInfo() throwing for a uid without a passwd entry", () => {
    const throws = () => {
      throw new Error("ENOENT");
    };
    expect(osUserName(sources({ userInfo: throws, uid: () => 1 }))).toBe("daemon");
    expect(osUserName(sources({ userInfo: throws, uid: () => 77, passwd: () => "", env: { USER: "eve" } }))).toBe("eve");
  });

  it("reads only well-formed passwd lines", () => {
    expect(passwdName("#comment\n:x:5:5::/:/bin/sh\nbroken\nzed:x:5:5::/:/bin/sh", 5)).toBe("zed");
    expect(passwdName(PASSWD, 99)).toBeNull();
  });
});
