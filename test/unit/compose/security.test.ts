/** The safety checks: host paths and symlinks, security options, capabilities, extends/include, other apps' volumes. */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: compose interpolation syntax is the subject under test
import { describe, expect, it } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ComposeError, type SafetyPolicy } from "../../../src/compose/model";
import { parseCompose } from "../../../src/compose/parse";
import { hostPathProblem, hostPathRule } from "../../../src/compose/paths";
import { checkSafety } from "../../../src/compose/security";
import { capName, unconfinedOption } from "../../../src/compose/security-privileges";
import { tempDir } from "../../helpers/tmp";
import { POLICY } from "./fixtures";

function violation(text: string, policy: SafetyPolicy = POLICY, env: Record<string, string> = {}): ComposeError | null {
  try {
    checkSafety(parseCompose(text, env), policy);
    return null;
  } catch (e) {
    if (e instanceof ComposeError) return e;
    throw e;
  }
}

const bindOf = (source: string) => `services:\n  web:\n    image: nginx\n    volumes:\n      - "${source}:/mnt"\n`;

/** A real host layout in a temp dir: <root>/data (sundeck data), <root>/apps/myapp, <root>/apps/other, <root>/srv. */
function realLayout() {
  const root = tempDir("sundeck-compose-sec-");
  const policy: SafetyPolicy = { appDir: join(root, "apps/myapp"), appsDir: join(root, "apps"), dataDir: join(root, "data") };
  for (const d of ["data", "apps/myapp/data", "apps/other", "srv"]) mkdirSync(join(root, d), { recursive: true });
  return { root, policy };
}

describe("host path rule", () => {
  const rule = hostPathRule(POLICY);
  const allowing = hostPathRule({ ...POLICY, allowedHostPaths: ["/srv/media", "/home/user/media/", "/var/lib"] });

  it.each(["./data", ".", "./", "data/sub", "./a/../b", "/etc/sundeck/apps/myapp", "/etc/sundeck/apps/myapp/data"])(
    "allows %s (inside the app)",
    (p) => {
      expect(hostPathProblem(p, POLICY.appDir, rule)).toBeNull();
    },
  );

  it.each(["/srv/media", "/srv/media/", "/srv/media/films", "//srv//media/./x", "/home/user/media/a", "/var/lib/postgres"])(
    "allows %s when compose.allowed_host_paths covers it",
    (p) => {
      expect(hostPathProblem(p, POLICY.appDir, allowing)).toBeNull();
    },
  );

  it.each([
    ["/", "host path is /"],
    ["/etc", "contains the apps directory"],
    ["/var/lib/containerd", "is /var/lib/containerd"],
    ["/var/run/docker.sock", "is the docker socket"],
    ["/proc/1/root", "under /proc"],
  ])("refuses %s: %s", (p, reason) => {
    expect(hostPathProblem(p, POLICY.appDir, rule)).toContain(reason);
  });

  it.each([
    "/srv/data",
    "/home/user/media",
    "/opt/app",
    "/mnt/backups",
    "/tmp",
    "/usr/bin",
    "/usr/local/bin",
    "/lib/systemd/system",
    "/var/spool/cron",
    "/var/lib/kubelet",
    "/var/log",
    "/home",
    "/home/user/.ssh",
    "/etcetera",
  ])("refuses %s by default: outside the app, nothing allowed", (p) => {
    expect(hostPathProblem(p, POLICY.appDir, rule)).toBe(
      "host path is outside the app directory and not under compose.allowed_host_paths",
    );
  });

  it.each([
    ["/srv/medias", "not under compose.allowed_host_paths"],
    ["/srv/media/../etc", "not under compose.allowed_host_paths"],
    ["/srv", "not under compose.allowed_host_paths"],
    ["/var/lib/sundeck", "host path is the sundeck data directory"],
    ["/var/lib/sundeck/db", "host path sits under the sundeck data directory"],
    ["/var/lib/docker", "host path is /var/lib/docker"],
    ["/var/lib/docker/volumes/x", "host path sits under /var/lib/docker"],
    ["/var/lib/containerd", "host path is /var/lib/containerd"],
  ])("refuses %s even with allowed paths (%s)", (p, reason) => {
    expect(hostPathProblem(p, POLICY.appDir, allowing)).toContain(reason);
  });

  it.each([
    ["..", "path escapes the app directory"],
    ["../other", "path escapes the app directory"],
    ["./a/../../x", "path escapes the app directory"],
    ["data/../../../../etc", "path escapes the app directory"],
    ["~", "home directory paths are not allowed"],
    ["~root/.ssh", "home directory paths are not allowed"],
    ["./x\0y", "path contains a NUL byte"],
    ["c:../../../../etc", "Windows paths are not supported"],
    ["C:\\Windows", "Windows paths are not supported"],
    ["\\\\host\\share", "Windows paths are not supported"],
  ])("refuses %s", (p, reason) => {
    expect(hostPathProblem(p, POLICY.appDir, rule)).toContain(reason);
  });
});

describe("security options and capabilities", () => {
  it.each([
    "seccomp=unconfined",
    "seccomp:unconfined",
    "SECCOMP = unconfined",
    "seccomp=/srv/profile.json",
    "apparmor=unconfined",
    "apparmor:unconfined",
    "label=disable",
    "label:disable",
    "label=type:spc_t",
    "systempaths=unconfined",
  ])("treats %s as unconfined", (opt) => {
    expect(unconfinedOption(opt)).toBe(true);
  });

  it.each(["no-new-privileges", "no-new-privileges:true", "apparmor=docker-default", "label=level:s0:c1,c2", "seccomp=default"])(
    "allows %s",
    (opt) => {
      expect(unconfinedOption(opt)).toBe(false);
    },
  );

  it("normalises capability names", () => {
    expect(capName(" cap_sys_admin ")).toBe("SYS_ADMIN");
    expect(capName("all")).toBe("ALL");
  });

  it.each(["NET_BIND_SERVICE", "CHOWN", "NET_RAW", "KILL"])("allows cap_add %s", (cap) => {
    expect(violation(`services:\n  web:\n    image: x\n    cap_add: [${cap}]\n`)).toBeNull();
  });

  it("accepts cap_add given as a single string", () => {
    expect(violation("services:\n  web:\n    image: x\n    cap_add: SYS_ADMIN\n")?.rule).toBe("cap-add");
  });

  it.each(["false", "no", '"false"'])("allows privileged: %s", (v) => {
    expect(violation(`services:\n  web:\n    image: x\n    privileged: ${v}\n`)).toBeNull();
  });
});

describe("checkSafety", () => {
  it("reports the first violation in document order", () => {
    const err = violation(
      "services:\n  a:\n    image: x\n    volumes: ['/etc:/etc']\n    privileged: true\n  b:\n    image: x\n    pid: host\n",
    );
    expect(err?.service).toBe("a");
    expect(err?.rule).toBe("privileged");
  });

  it("accepts relative paths inside the app even though the apps directory sits under /etc", () => {
    expect(violation(bindOf("./data"))).toBeNull();
    expect(violation(bindOf("/etc/sundeck/apps/myapp/data"))).toBeNull();
  });

  it("checks the interpolated value, not the text", () => {
    expect(violation(bindOf("${DIR}"), POLICY, { DIR: "./ok" })).toBeNull();
    expect(violation(bindOf("${DIR}"), POLICY, { DIR: "/proc" })?.rule).toBe("bind-mount");
    expect(violation(bindOf("${DIR}"), POLICY, { DIR: "/srv/ok" })?.rule).toBe("bind-mount");
  });

  it("refuses a symlink inside the app directory that points at /etc", () => {
    const { policy } = realLayout();
    symlinkSync("/etc", join(policy.appDir, "config"));
    const err = violation(bindOf("./config"), policy);
    expect(err?.rule).toBe("bind-mount");
    expect(err?.message).toContain("symbolic link");
    expect(violation(bindOf("./config/ssl"), policy)?.rule).toBe("bind-mount");
  });

  it("refuses a relative symlink into another app's directory", () => {
    const { policy } = realLayout();
    symlinkSync("../other", join(policy.appDir, "peek"));
    expect(violation(bindOf("./peek"), policy)?.message).toContain("the apps directory");
  });

  it("refuses a symlink chain that ends at the docker socket", () => {
    const { policy } = realLayout();
    symlinkSync("/var/run", join(policy.appDir, "one"));
    symlinkSync("./one/docker.sock", join(policy.appDir, "two"));
    expect(violation(bindOf("./two"), policy)?.message).toContain("docker socket");
    // even when the server allows /var/run, the socket stays protected
    const allowing = { ...policy, allowedHostPaths: ["/var/run", "/run"] };
    expect(violation(bindOf("./two"), allowing)?.message).toContain("docker socket");
  });

  it("refuses a dangling symlink that points at a protected path", () => {
    const { policy } = realLayout();
    symlinkSync("/etc/does-not-exist-sundeck", join(policy.appDir, "dangling"));
    expect(violation(bindOf("./dangling"), policy)?.rule).toBe("bind-mount");
  });

  it("refuses a symlink loop", () => {
    const { policy } = realLayout();
    symlinkSync("./b", join(policy.appDir, "a"));
    symlinkSync("./a", join(policy.appDir, "b"));
    expect(violation(bindOf("./a"), policy)?.message).toContain("too many symbolic links");
  });

  it("allows symlinks that stay inside the app, or lead to an allowed host path", () => {
    const { root, policy } = realLayout();
    symlinkSync("./data", join(policy.appDir, "current"));
    symlinkSync(join(root, "srv"), join(policy.appDir, "media"));
    expect(violation(bindOf("./current"), policy)).toBeNull();
    expect(violation(bindOf("./media"), policy)?.message).toContain("symbolic link to outside the app directory");
    expect(violation(bindOf("./media"), { ...policy, allowedHostPaths: [join(root, "srv")] })).toBeNull();
  });

  it("refuses the data and apps directories of a real layout, and anything containing them", () => {
    const { root, policy } = realLayout();
    expect(violation(bindOf(policy.dataDir), policy)?.message).toContain("is the sundeck data directory");
    expect(violation(bindOf(join(policy.appsDir, "other")), policy)?.message).toContain("sits under the apps directory");
    expect(violation(bindOf(root), policy)?.message).toContain("contains the sundeck data directory");
    expect(violation(bindOf(join(root, "srv")), policy)?.message).toContain("not under compose.allowed_host_paths");
    const allowing = { ...policy, allowedHostPaths: [root] };
    expect(violation(bindOf(join(root, "srv")), allowing)).toBeNull();
    expect(violation(bindOf(root), allowing)?.message).toContain("contains the sundeck data directory");
    expect(violation(bindOf(policy.dataDir), allowing)?.message).toContain("is the sundeck data directory");
  });

  it("allows the app's own files when the apps directory lives inside the data directory", () => {
    const root = tempDir("sundeck-compose-local-");
    const policy: SafetyPolicy = {
      appDir: join(root, "sundeck-data/apps/demo"),
      appsDir: join(root, "sundeck-data/apps"),
      dataDir: join(root, "sundeck-data"),
    };
    mkdirSync(policy.appDir, { recursive: true });
    expect(violation(bindOf("./data"), policy)).toBeNull();
    expect(violation(bindOf("../other"), policy)?.message).toContain("escapes");
    expect(violation(bindOf(join(policy.dataDir, "sundeck.db")), policy)?.message).toContain("sundeck data directory");
  });

  it("reads extended files from disk by default and checks them", () => {
    const { policy } = realLayout();
    writeFileSync(join(policy.appDir, "base.yml"), "services:\n  base:\n    image: x\n    cap_add: [SYS_ADMIN]\n");
    const text = "services:\n  web:\n    extends: {file: base.yml, service: base}\n";
    const err = violation(text, policy);
    expect(err?.rule).toBe("cap-add");
    expect(err?.service).toBe("base");
    expect(err?.message).toContain('(in "base.yml")');
    writeFileSync(join(policy.appDir, "base.yml"), "services:\n  base:\n    image: x\n    volumes: [./data:/data]\n");
    expect(violation(text, policy)).toBeNull();
  });

  it("refuses an extended file that is a symlink to a file outside the app", () => {
    const { root, policy } = realLayout();
    writeFileSync(join(root, "srv/base.yml"), "services:\n  base:\n    image: x\n");
    symlinkSync(join(root, "srv/base.yml"), join(policy.appDir, "base.yml"));
    const err = violation("services:\n  web:\n    extends: {file: base.yml, service: base}\n", policy);
    expect(err?.rule).toBe("extends");
    expect(err?.message).toContain("symbolic link to outside the app directory");
  });

  it("stops files that include each other", () => {
    const { policy } = realLayout();
    writeFileSync(join(policy.appDir, "a.yml"), "include: [b.yml]\nservices:\n  a: {image: x}\n");
    writeFileSync(join(policy.appDir, "b.yml"), "include: [a.yml]\nservices:\n  b: {image: x}\n");
    const err = violation("include: [a.yml]\nservices:\n  web: {image: x}\n", policy);
    expect(err?.rule).toBe("include");
    expect(err?.message).toContain("nested too deeply");
  });

  it("checks included files with the paths relative to their own directory", () => {
    const { policy } = realLayout();
    mkdirSync(join(policy.appDir, "parts"));
    writeFileSync(join(policy.appDir, "parts/db.yml"), "services:\n  db:\n    image: x\n    volumes: [../data:/data]\n");
    expect(violation("include: [parts/db.yml]\nservices:\n  web: {image: x}\n", policy)).toBeNull();
    writeFileSync(join(policy.appDir, "parts/db.yml"), "services:\n  db:\n    image: x\n    volumes: [../../x:/data]\n");
    expect(violation("include: [parts/db.yml]\nservices:\n  web: {image: x}\n", policy)?.message).toContain("escapes");
  });

  it("reports a malformed included file as a yaml error naming it", () => {
    const { policy } = realLayout();
    writeFileSync(join(policy.appDir, "bad.yml"), "services:\n  x: [\n");
    const err = violation("include: [bad.yml]\nservices:\n  web: {image: x}\n", policy);
    expect(err?.rule).toBe("yaml");
    expect(err?.message).toContain('"bad.yml"');
  });

  it("allows this app's own volumes and networks by their compose names, and the public network", () => {
    const text =
      "services:\n  web: {image: x}\nvolumes:\n  d: {external: true, name: sundeck-myapp_d}\nnetworks:\n  p: {external: true, name: sundeck-public}\n  o: {external: {name: shared-net}}\n";
    expect(violation(text)).toBeNull();
  });

  it("refuses another app's volume named through the old external.name form", () => {
    const text = "services:\n  web: {image: x}\nvolumes:\n  d: {external: {name: sundeck-other_d}}\n";
    expect(violation(text)?.rule).toBe("volume-name");
  });

  it("allows a service to share the namespaces of another service of the app", () => {
    const text =
      "services:\n  web: {image: x}\n  side:\n    image: x\n    network_mode: service:web\n    pid: service:web\n    ipc: service:web\n";
    expect(violation(text)).toBeNull();
  });
});
