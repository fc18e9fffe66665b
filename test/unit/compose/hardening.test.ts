/**
 * The rules that keep what compose reads equal to what was checked: characters, one document, the key allowlist,
 * volume and network drivers, and the quoting of the rendered file.
 */
import { describe, expect, it } from "bun:test";
import { parse } from "yaml";
import { ComposeError } from "../../../src/compose/model";
import { parseCompose } from "../../../src/compose/parse";
import { renderCompose } from "../../../src/compose/rewrite";
import { checkSafety } from "../../../src/compose/security";
import { dumpYaml, loadYaml, plainSafe } from "../../../src/compose/yaml";
import { POLICY } from "./fixtures";

function refusal(text: string, env: Record<string, string> = {}, files: Record<string, string> = {}): ComposeError | null {
  try {
    checkSafety(parseCompose(text, env), POLICY, (abs) => files[abs.slice(POLICY.appDir.length + 1)] ?? null);
    return null;
  } catch (e) {
    if (e instanceof ComposeError) return e;
    throw e;
  }
}

const web = (extra: string) => `services:\n  web:\n    image: nginx\n${extra}`;

describe("characters", () => {
  it.each([
    ["U+2028 in a quoted value", 'services:\n  web:\n    image: "nginx:alpine\u2028    privileged: true"\n'],
    ["U+2029 in a plain value", "services:\n  web:\n    image: nginx\u2029privileged: true\n"],
    ["NEL in a value", "services:\n  web:\n    image: nginx\u0085x\n"],
    ["U+2028 after a comment", "services:\n  web: # note\u2028    privileged: true\n    image: x\n"],
    ["a NUL byte", "services:\n  web:\n    image: x\u0000\n"],
    ["an escape character", "services:\n  web:\n    image: x\u001b[31m\n"],
    ["DEL", "services:\n  web:\n    image: x\u007f\n"],
    ["a BOM inside", "services:\n  web:\n    image: x\ufeff\n"],
    ["a lone CR", "services:\n  web:\r    image: x\n"],
    ["a lone surrogate", "services:\n  web:\n    image: x\ud800\n"],
  ])("refuses %s in the raw text, with line and column", (_what, text) => {
    const err = refusal(text);
    expect(err?.rule).toBe("characters");
    expect(err?.service).toBeNull();
    expect(err?.message).toMatch(/character U\+[0-9A-F]{4} \(.+\) at line \d+, column \d+/);
  });

  it("accepts a leading BOM and CRLF line ends", () => {
    expect(refusal("\ufeffservices:\r\n  web:\r\n    image: x\r\n")).toBeNull();
  });

  it.each([
    ["\u2028", "LINE SEPARATOR"],
    ["\u2029", "PARAGRAPH SEPARATOR"],
    ["\u0085", "NEL"],
    ["\u0007", "control character"],
  ])("refuses %j coming from .env, naming the service and key", (ch, name) => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose interpolation in the file, not a JS template
    const err = refusal(web("    environment:\n      A: ${X}\n"), { X: `a${ch}privileged: true` });
    expect(err?.rule).toBe("characters");
    expect(err?.service).toBe("web");
    expect(err?.message).toContain("environment.A contains");
    expect(err?.message).toContain(name);
  });

  it("refuses an escaped line separator in a double-quoted value, and a tab in a key", () => {
    expect(refusal(web('    labels:\n      a: "x\\u2028y"\n'))?.rule).toBe("characters");
    expect(refusal(web('    labels:\n      "a\\tb": x\n'))?.rule).toBe("characters");
  });

  it("keeps tabs and newlines in values", () => {
    expect(refusal(web('    command: ["sh", "-c", "a\\tb\\nc"]\n'))).toBeNull();
  });

  it("refuses a line separator inside an extends file, even in a comment", () => {
    const err = refusal(
      "services:\n  web:\n    extends: {file: base.yml, service: base}\n",
      {},
      {
        "base.yml": "services:\n  base: # x\u2028    privileged: true\n    image: x\n",
      },
    );
    expect(err?.rule).toBe("characters");
    expect(err?.message).toContain('"base.yml"');
  });
});

describe("one YAML document", () => {
  it.each([
    ["a second document", "services:\n  web: {image: x}\n---\nservices:\n  evil: {image: x, privileged: true}\n"],
    ["an empty second document", "services:\n  web: {image: x}\n---\n"],
    ["content after a document end marker", "services:\n  web: {image: x}\n...\nservices:\n  evil: {image: x}\n"],
    ["a %YAML directive", "%YAML 1.1\n---\nservices:\n  web: {image: x}\n"],
    ["a %TAG directive", "%TAG !e! tag:example.com,2000:\n---\nservices:\n  web: {image: x}\n"],
  ])("refuses %s", (_what, text) => {
    expect(refusal(text)?.rule).toBe("yaml");
  });

  it("refuses a second document in an included file", () => {
    const err = refusal(
      "include: [more.yml]\nservices:\n  web: {image: x}\n",
      {},
      {
        "more.yml": "services:\n  a: {image: x}\n---\nservices:\n  b: {image: x, privileged: true}\n",
      },
    );
    expect(err?.rule).toBe("yaml");
    expect(err?.message).toContain('"more.yml"');
  });

  it("accepts a leading document marker", () => {
    expect(refusal("---\nservices:\n  web: {image: x}\n")).toBeNull();
  });
});

describe("allowed keys", () => {
  it.each([
    ["use_api_socket: true", "docker-socket", "use_api_socket"],
    ["post_start:\n      - command: id\n        privileged: true", "lifecycle-hooks", "post_start"],
    ["pre_stop: [{command: id}]", "lifecycle-hooks", "pre_stop"],
    ["provider: {type: model}", "provider", "provider"],
    ["gpus: all", "devices", "gpus"],
    [
      "deploy:\n      resources:\n        reservations:\n          devices: [{capabilities: [gpu]}]",
      "devices",
      "deploy.resources.reservations.devices",
    ],
    ["sysctls: {net.ipv4.ip_forward: 1}", "sysctls", "sysctls"],
    ["external_links: [db]", "external-links", "external_links"],
    ["privilaged: true", "unknown-key", "unknown key privilaged"],
    ["credential_spec: {file: x}", "unknown-key", "unknown key credential_spec"],
    ["net: host", "unknown-key", "unknown key net"],
    ["deploy:\n      resources:\n        limits:\n          devices: x", "unknown-key", "deploy.resources.limits.devices"],
    ["networks:\n      default:\n        driver_opts: {a: b}", "unknown-key", "networks.default.driver_opts"],
    [
      "volumes:\n      - type: bind\n        source: ./a\n        target: /a\n        bind: {foo: 1}",
      "unknown-key",
      "volumes.bind.foo",
    ],
    ["runtime: nvidia", "runtime", "runtime nvidia"],
    ["labels: [com.docker.compose.project=sundeck-other]", "labels", "com.docker.compose.project"],
    ["security_opt: [apparmor=my-profile]", "security-opt", "apparmor=my-profile"],
  ])("refuses %s", (extra, rule, text) => {
    const err = refusal(web(`    ${extra}\n`));
    expect(err?.rule).toBe(rule);
    expect(err?.service).toBe("web");
    expect(err?.message).toContain(text);
  });

  it("refuses unknown keys of top-level sections without a service", () => {
    expect(refusal("services:\n  web: {image: x}\nmodels:\n  m: {model: ai/x}\n")?.rule).toBe("unknown-key");
    const err = refusal("services:\n  web: {image: x}\nvolumes:\n  data:\n    driverr: local\n");
    expect([err?.rule, err?.service]).toEqual(["unknown-key", null]);
    expect(err?.message).toContain("volumes.data.driverr");
  });

  it("allows x- keys, runc, docker-default, and drops x- keys and develop from the rendered file", () => {
    const text = web(
      "    x-note: hi\n    runtime: runc\n    security_opt: [apparmor=docker-default]\n    develop:\n      watch: [{path: ., action: rebuild}]\n    labels: {x-team: a}\n",
    );
    expect(refusal(`x-common: 1\n${text}`)).toBeNull();
    const out = parse(renderCompose(parseCompose(`x-common: 1\n${text}`, {}), { routed: [], publicNetwork: "p" }));
    expect(out["x-common"]).toBeUndefined();
    expect(out.services.web["x-note"]).toBeUndefined();
    expect(out.services.web.develop).toBeUndefined();
    expect(out.services.web.labels).toEqual({ "x-team": "a" });
  });
});

describe("volume and network drivers", () => {
  const volume = (def: string) => `services:\n  web:\n    image: x\n    volumes: [data:/v]\nvolumes:\n  data:\n${def}`;
  it.each([
    ["    driver: Local\n    driver_opts: {type: overlay, o: lowerdir=/etc, device: overlay}\n", "overlay"],
    ["    driver_opts: {type: proc, device: proc}\n", "proc"],
    ["    driver_opts: {type: sysfs, device: sysfs}\n", "sysfs"],
    ["    driver_opts: {type: devtmpfs, device: devtmpfs}\n", "devtmpfs"],
    ["    driver_opts: {type: ext4, device: /dev/sda1}\n", "ext4"],
    ["    driver_opts: {device: /dev/sda1}\n", "(none)"],
    ["    driver_opts: {type: tmpfs, device: tmpfs, o: bind}\n", "tmpfs option"],
    ["    driver_opts: {type: none, o: bind, device: /etc}\n", "/etc"],
    ["    driver_opts: {type: none, o: bind, device: /srv/x}\n", "not under compose.allowed_host_paths"],
    ["    driver_opts: {type: nfs, o: bind, device: /etc}\n", "remote export"],
    ["    driver_opts: {type: tmpfs, device: tmpfs, mountpoint: /etc}\n", "mountpoint"],
    ["    driver: local-persist\n    driver_opts: {mountpoint: /etc}\n", "local-persist"],
  ])("refuses a volume with %s", (def, text) => {
    const err = refusal(volume(def));
    expect(err?.rule).toBe("volume-driver");
    expect(err?.service).toBe("web");
    expect(err?.message).toContain(text);
  });

  it.each([
    "    driver_opts: {type: tmpfs, device: tmpfs, o: 'size=100m,uid=1000'}\n",
    "    driver_opts: {type: nfs, o: 'addr=10.0.0.5,rw,nfsvers=4', device: ':/exports/media'}\n",
    "    driver_opts: {type: cifs, o: 'username=u,password=p', device: //nas/share}\n",
    "    driver: LOCAL\n",
  ])("accepts a volume with %s", (def) => {
    expect(refusal(volume(def))).toBeNull();
  });

  const network = (def: string) => `services:\n  web: {image: x}\nnetworks:\n  n:\n${def}`;
  it.each([
    ["    driver: host\n", "host"],
    ["    driver: Macvlan\n", "Macvlan"],
    ["    driver: weave\n", "weave"],
    ["    driver_opts: {com.docker.network.bridge.gateway_mode_ipv4: routed}\n", "gateway_mode_ipv4"],
    ["    driver_opts: {com.docker.network.bridge.name: docker0}\n", "bridge.name"],
    ["    ipam: {driver: dhcp}\n", "dhcp"],
  ])("refuses a network with %s", (def, text) => {
    const err = refusal(network(def));
    expect(err?.rule).toBe("network-driver");
    expect(err?.message).toContain(text);
  });

  it("accepts bridge networks with reviewed options and a subnet", () => {
    const def =
      "    driver: bridge\n    driver_opts: {com.docker.network.driver.mtu: 1400}\n    ipam:\n      config: [{subnet: 172.28.0.0/16}]\n";
    expect(refusal(network(def))).toBeNull();
  });
});

describe("time zone files", () => {
  it("allows read-only binds of /etc/localtime and /etc/timezone only", () => {
    expect(refusal(web("    volumes: ['/etc/localtime:/etc/localtime:ro', '/etc/timezone:/etc/timezone:ro']\n"))).toBeNull();
    expect(
      refusal(web("    volumes: [{type: bind, source: /etc/localtime, target: /etc/localtime, read_only: true}]\n")),
    ).toBeNull();
    expect(refusal(web("    volumes: ['/etc/localtime:/etc/localtime']\n"))?.rule).toBe("bind-mount");
    expect(refusal(web("    volumes: ['/etc/localtime/../shadow:/x:ro']\n"))?.rule).toBe("bind-mount");
    expect(refusal(web("    volumes: ['/etc/localtimes:/x:ro']\n"))?.rule).toBe("bind-mount");
  });
});

describe("rendering", () => {
  it.each([
    "yes",
    "No",
    "on",
    "OFF",
    "y",
    "n",
    "null",
    "~",
    "1:20",
    "0x1F",
    "0o17",
    "017",
    "1_000",
    ".inf",
    "2001-12-14",
    "=",
    "<<",
    "a: b",
    "#x",
    "- x",
    "@x",
    "`x",
    "*x",
    "&x",
    "!x",
    "%x",
    "|",
    ">",
    "'",
    '"',
    "{",
    "[",
    " x",
    "x ",
    "",
    "1e3",
    "-1",
    "+1",
  ])("quotes %j so every reader sees a string", (s) => {
    expect(plainSafe(s)).toBe(false);
    const text = dumpYaml({ v: s, [s || "k"]: 1 });
    expect(loadYaml(text)).toEqual({ v: s, [s || "k"]: 1 });
  });

  it.each(["nginx", "web", "my_app", "a.b-c/d", "sundeck.domain"])("writes %s plain", (s) => {
    expect(plainSafe(s)).toBe(true);
  });
});

describe("numbers as compose reads them", () => {
  it("reads a leading-zero integer as octal, as go-yaml and PyYAML do", () => {
    expect(loadYaml("a: 0400\nb: 0o17\nc: 400\nd: '0400'\ne: 0\n")).toEqual({ a: 256, b: 15, c: 400, d: "0400", e: 0 });
  });
});
