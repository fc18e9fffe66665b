/** The rendered compose file: ports, the public network for routed services, no re-interpolation, YAML 1.1 safety. */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: compose interpolation syntax is the subject under test
import { describe, expect, it } from "bun:test";
import { parse } from "yaml";
import { ComposeError } from "../../../src/compose/model";
import { parseCompose } from "../../../src/compose/parse";
import { renderCompose, renderedPorts } from "../../../src/compose/rewrite";

const NET = "sundeck-public";

function render(text: string, routed: string[] = [], env: Record<string, string> = {}): Record<string, any> {
  const out = renderCompose(parseCompose(text, env), { routed, publicNetwork: NET });
  const v12 = parse(out);
  // compose v1 reads YAML 1.1: the rendered file must mean the same thing there
  expect(parse(out, { version: "1.1" })).toEqual(v12);
  return v12;
}

const portsOf = (ports: string) => render(`services:\n  web:\n    image: nginx\n    ports: ${ports}\n`).services.web.ports;

describe("renderCompose: ports", () => {
  it.each([
    ['["8080:80"]', ["127.0.0.1:8080:80"]],
    ['["0.0.0.0:8080:80"]', ["0.0.0.0:8080:80"]],
    ['["[::1]:8080:80"]', ["[::1]:8080:80"]],
    ['["[::]:8080:80"]', ["[::]:8080:80"]],
    ['["10.1.2.3:8080:80"]', ["10.1.2.3:8080:80"]],
    ['["8080-8081:80-81"]', ["127.0.0.1:8080-8081:80-81"]],
    ['["53:53/udp"]', ["127.0.0.1:53:53/udp"]],
    ["[80]", ["127.0.0.1::80"]],
    ['["80"]', ["127.0.0.1::80"]],
    ['[":80"]', ["127.0.0.1::80"]],
    ['["127.0.0.1::80"]', ["127.0.0.1::80"]],
    ["[{target: 80, published: 8080}]", ["127.0.0.1:8080:80"]],
    ["[{target: 80, published: '8080-8081', protocol: udp}]", ["127.0.0.1:8080-8081:80/udp"]],
    ["[{target: 80, published: 8080, host_ip: 0.0.0.0}]", ["0.0.0.0:8080:80"]],
    ["[{target: 80, published: 8080, host_ip: '::1'}]", ["[::1]:8080:80"]],
    ["[{target: 80}]", ["127.0.0.1::80"]],
    ['["22:22", "21:21"]', ["127.0.0.1:22:22", "127.0.0.1:21:21"]],
  ])("renders ports %s as %j", (ports, expected) => {
    expect(portsOf(ports)).toEqual(expected);
  });

  it("renders ports given as a block list", () => {
    const doc = render(
      "services:\n  web:\n    image: nginx\n    ports:\n      - 8080:80\n      - target: 443\n        published: 8443\n",
    );
    expect(doc.services.web.ports).toEqual(["127.0.0.1:8080:80", "127.0.0.1:8443:443"]);
  });

  it("keeps port strings as strings so YAML 1.1 does not read 22:22 as a base-60 number", () => {
    const out = renderCompose(parseCompose('services:\n  web:\n    image: x\n    ports: ["22:22"]\n', {}), {
      routed: [],
      publicNetwork: NET,
    });
    expect(parse(out, { version: "1.1" }).services.web.ports[0]).toBe("127.0.0.1:22:22");
  });

  it("leaves services without ports without a ports key", () => {
    expect(render("services:\n  web: {image: x}\n").services.web.ports).toBeUndefined();
  });

  it("exposes the rendered ports of one service", () => {
    expect(renderedPorts({ ports: ["8080:80", { target: 53, protocol: "udp" }] })).toEqual([
      "127.0.0.1:8080:80",
      "127.0.0.1::53/udp",
    ]);
  });
});

describe("renderCompose: networks", () => {
  it("puts a routed service without networks on default and the public network", () => {
    const doc = render("services:\n  web: {image: x}\n  db: {image: y}\n", ["web"]);
    expect(doc.services.web.networks).toEqual(["default", NET]);
    expect(doc.services.db.networks).toBeUndefined();
    expect(doc.networks).toEqual({ [NET]: { external: true } });
  });

  it("adds the public network to a list of networks", () => {
    const doc = render("services:\n  web:\n    image: x\n    networks: [front, back]\nnetworks:\n  front: {}\n  back: {}\n", [
      "web",
    ]);
    expect(doc.services.web.networks).toEqual(["front", "back", NET]);
    expect(doc.networks).toEqual({ front: {}, back: {}, [NET]: { external: true } });
  });

  it("adds the public network to a map of networks, keeping aliases", () => {
    const doc = render(
      "services:\n  web:\n    image: x\n    networks:\n      back:\n        aliases: [api]\nnetworks:\n  back: {}\n",
      ["web"],
    );
    expect(doc.services.web.networks).toEqual({ back: { aliases: ["api"] }, [NET]: {} });
  });

  it("does not add the public network twice", () => {
    const doc = render(
      `services:\n  web:\n    image: x\n    networks: [default, ${NET}]\nnetworks:\n  ${NET}: {external: true}\n`,
      ["web"],
    );
    expect(doc.services.web.networks).toEqual(["default", NET]);
    expect(doc.networks).toEqual({ [NET]: { external: true } });
  });

  it("declares no public network when nothing is routed", () => {
    expect(render("services:\n  web: {image: x}\n").networks).toBeUndefined();
  });

  it("refuses to route a service that sets network_mode", () => {
    const p = parseCompose("services:\n  web: {image: x}\n  side: {image: y, network_mode: 'service:web'}\n", {});
    expect(() => renderCompose(p, { routed: ["side"], publicNetwork: NET })).toThrow(ComposeError);
  });
});

describe("renderCompose: document", () => {
  it("drops name, version and top-level extension keys", () => {
    const doc = render('version: "3.9"\nname: shop\nx-base: &b {restart: always}\nservices:\n  web:\n    <<: *b\n    image: x\n');
    expect(Object.keys(doc)).toEqual(["services"]);
    expect(doc.services.web).toEqual({ restart: "always", image: "x" });
  });

  it("escapes every dollar so compose does not interpolate a second time", () => {
    const text =
      'services:\n  web:\n    image: x\n    command: ["sh", "-c", "echo $$HOME ${GREETING}"]\n    environment:\n      PASSWORD: ${PASSWORD}\n      PRICE: "$$5"\n    labels: [a=$$x]\n';
    const out = renderCompose(parseCompose(text, { GREETING: "hi", PASSWORD: "pa$word" }), { routed: [], publicNetwork: NET });
    const doc = parse(out);
    expect(doc.services.web.command).toEqual(["sh", "-c", "echo $$HOME hi"]);
    expect(doc.services.web.environment).toEqual({ PASSWORD: "pa$$word", PRICE: "$$5" });
    expect(doc.services.web.labels).toEqual(["a=$$x"]);
  });

  it("quotes strings that YAML 1.1 would read as booleans, numbers or null", () => {
    const doc = render(
      'services:\n  web:\n    image: x\n    environment: {A: "yes", B: "on", C: "0777", D: "~", E: "1e3", F: "null", G: "=", H: "1:20"}\n',
    );
    expect(doc.services.web.environment).toEqual({
      A: "yes",
      B: "on",
      C: "0777",
      D: "~",
      E: "1e3",
      F: "null",
      G: "=",
      H: "1:20",
    });
  });

  it("writes casted fields with their real types", () => {
    const doc = render("services:\n  web:\n    image: x\n    read_only: ${RO}\n    deploy: {replicas: $N}\n", [], {
      RO: "true",
      N: "2",
    });
    expect(doc.services.web.read_only).toBe(true);
    expect(doc.services.web.deploy.replicas).toBe(2);
  });

  it("writes shared anchors as plain copies, without YAML aliases", () => {
    const out = renderCompose(
      parseCompose("x-l: &l {driver: json-file}\nservices:\n  a: {image: x, logging: *l}\n  b: {image: y, logging: *l}\n", {}),
      { routed: [], publicNetwork: NET },
    );
    expect(out).not.toContain("*");
    expect(out).not.toContain("&");
  });

  it("leaves the parsed project untouched", () => {
    const p = parseCompose('services:\n  web: {image: x, ports: ["80:80"]}\n', {});
    renderCompose(p, { routed: ["web"], publicNetwork: NET });
    expect(p.doc.services.web).toEqual({ image: "x", ports: ["80:80"] });
  });

  it("keeps multi-line strings intact", () => {
    const doc = render('services:\n  web:\n    image: x\n    entrypoint: "line one\\nline two $$X"\n');
    expect(doc.services.web.entrypoint).toBe("line one\nline two $$X");
  });
});
