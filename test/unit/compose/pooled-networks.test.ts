import { describe, expect, it } from "bun:test";
import { parseCompose } from "../../../src/compose/parse";
import { pooledNetworks } from "../../../src/compose/pooled-networks";
import { renderCompose } from "../../../src/compose/rewrite";
import { loadYaml } from "../../../src/compose/yaml";

const pooled = (text: string) => pooledNetworks(parseCompose(text, {}), "sundeck-x");

describe("the networks that take a subnet from the pool", () => {
  it("is default for services that name none, and every declared bridge network a service is on", () => {
    expect(pooled("services:\n  web: {image: a}\n")).toEqual([{ key: "default", name: "sundeck-x_default" }]);
    const text = `services:
  web: {image: a, networks: [front, back]}
  db: {image: b, networks: {back: {aliases: [db]}}}
  cache: {image: c}
networks:
  front: {}
  back: {driver: bridge, internal: true, name: shared-back}
  unused: {}
`;
    expect(pooled(text)).toEqual([
      { key: "default", name: "sundeck-x_default" },
      { key: "back", name: "shared-back" },
      { key: "front", name: "sundeck-x_front" },
    ]);
  });

  it("leaves networks the file addresses itself, external ones, other drivers, IPv6 and network_mode", () => {
    const text = `services:
  a: {image: a, networks: [own, ext, ov, v6]}
  b: {image: b, network_mode: host}
  c: {image: c, network_mode: "service:a"}
networks:
  own: {ipam: {config: [{subnet: 10.9.0.0/24}]}}
  ext: {external: true}
  ov: {driver: macvlan}
  v6: {enable_ipv6: true}
`;
    expect(pooled(text)).toEqual([]);
    expect(pooled("services:\n  web: {image: a}\nnetworks:\n  default: {external: true, name: shared}\n")).toEqual([]);
  });
});

describe("the rendered file", () => {
  it("gives each pooled network its subnet, keeping what the file set, and nothing to the others", () => {
    const p = parseCompose(
      "services:\n  web: {image: a, networks: [default, back]}\nnetworks:\n  back: {internal: true}\n  ext: {external: true}\n",
      {},
    );
    const doc = loadYaml(
      renderCompose(p, {
        routed: [],
        publicNetwork: "sundeck-public",
        subnets: { default: "10.213.0.0/25", back: "10.213.0.128/25" },
      }),
    ) as any;
    expect(doc.networks.default).toEqual({ ipam: { config: [{ subnet: "10.213.0.0/25" }] } });
    expect(doc.networks.back).toEqual({ internal: true, ipam: { config: [{ subnet: "10.213.0.128/25" }] } });
    expect(doc.networks.ext).toEqual({ external: true });
  });
});
