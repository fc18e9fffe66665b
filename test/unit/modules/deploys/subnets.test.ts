import { describe, expect, it } from "bun:test";
import { poolCheck } from "../../../../src/cli/doctor/subnets";
import { type Config, defaults } from "../../../../src/config/schema";
import { openDb } from "../../../../src/db";
import { parseRange4 } from "../../../../src/lib/ipv4-blocks";
import { createSubnetPool, type HostRoute, readHostRoutes, SubnetPoolExhausted } from "../../../../src/modules/deploys/subnets";

const net = (name: string, ...subnets: string[]) => ({ id: name, name, labels: {}, subnets });
const def = (slug: string, key = "default") => ({ key, name: `sundeck-${slug}_${key}` });

function pool(p = "10.213.0.0/24", prefix = 26, routes: HostRoute[] = []) {
  const db = openDb(":memory:");
  return { db, pool: createSubnetPool({ db, pool: p, prefix, now: () => "2026-12-02T00:00:00Z", hostRoutes: () => routes }) };
}

describe("the subnet pool", () => {
  it("gives blocks in order, the same one again to the same network, and takes them back on release", () => {
    const { pool: sp } = pool();
    expect(sp.assign("a", [def("a")], [])).toEqual({ default: "10.213.0.0/26" });
    expect(sp.assign("b", [def("b"), def("b", "back")], [])).toEqual({ default: "10.213.0.64/26", back: "10.213.0.128/26" });
    // the deploy again, its network up by now: the same block
    expect(sp.assign("a", [def("a")], [net("sundeck-a_default", "10.213.0.0/26")])).toEqual({ default: "10.213.0.0/26" });
    expect(sp.recorded("b", [def("b"), def("b", "gone")])).toEqual({ default: "10.213.0.64/26" });
    sp.release("a");
    expect(sp.assign("c", [def("c")], [])).toEqual({ default: "10.213.0.0/26" });
    expect(sp.usage().given.map((g) => `${g.slug}/${g.network}`)).toEqual(["b/default", "b/back", "c/default"]);
  });

  it("skips blocks other networks or host routes cover, and fails in words when none is left", () => {
    const routes = [{ iface: "eth1", range: parseRange4("10.213.0.64/26")! }];
    const { pool: sp } = pool("10.213.0.0/24", 26, routes);
    expect(sp.assign("a", [def("a")], [net("bridge", "172.17.0.0/16"), net("mine", "10.213.0.0/27")])).toEqual({
      default: "10.213.0.128/26",
    });
    expect(sp.assign("b", [def("b")], [])).toEqual({ default: "10.213.0.0/26" });
    expect(sp.assign("c", [def("c")], [net("mine", "10.213.0.0/27")])).toEqual({ default: "10.213.0.192/26" });
    let thrown: unknown;
    try {
      sp.assign("d", [def("d"), def("d", "back")], [net("mine", "10.213.0.0/27")]);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(SubnetPoolExhausted);
    expect((thrown as Error).message).toBe(
      "no free /26 block is left in docker.subnet_pool 10.213.0.0/24 for network default of d (4 blocks, 3 given to apps," +
        " the rest overlap other networks or host routes): set a larger docker.subnet_pool or a longer" +
        " docker.subnet_prefix in the config and restart Sundeck (sundeck doctor shows the pool's use)",
    );
    // nothing of the failed assignment was kept
    expect(sp.usage().given.map((g) => g.slug)).toEqual(["a", "b", "c"]);
  });

  it("leaves a network that exists with another subnet to it, and forgets a block taken from under a record", () => {
    const { pool: sp } = pool();
    expect(sp.assign("a", [def("a")], [net("sundeck-a_default", "172.20.0.0/16")])).toEqual({});
    expect(sp.assign("b", [def("b")], [])).toEqual({ default: "10.213.0.0/26" });
    // b's network went (pruned) and someone made a network over its block: b gets another
    expect(sp.assign("b", [def("b")], [net("squatter", "10.213.0.0/26")])).toEqual({ default: "10.213.0.64/26" });
    expect(sp.usage().given).toEqual([{ slug: "b", network: "default", subnet: "10.213.0.64/26" }]);
    // and a record that no longer matches the network that exists is dropped
    expect(sp.assign("b", [def("b")], [net("sundeck-b_default", "172.21.0.0/16")])).toEqual({});
    expect(sp.usage().given).toEqual([]);
  });

  it("is off with an empty pool", () => {
    const { pool: sp } = pool("");
    expect(sp.enabled).toBe(false);
    expect(sp.assign("a", [def("a")], [])).toEqual({});
  });
});

describe("the host's routes", () => {
  it("are read from /proc/net/route without the default route and Docker's bridges", () => {
    const text = `Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
eth0\t00000000\t0100A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0
eth0\t0000A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
wg0\t0000D50A\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0
docker0\t000011AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0
br-0123456789ab\t0000D50A\t00000000\t0001\t0\t0\t0\t80FFFFFF\t0\t0\t0
`;
    expect(
      readHostRoutes(text).map((r) => `${r.iface} ${r.range.first >>> 24}.${(r.range.first >>> 16) & 255}/${r.range.bits}`),
    ).toEqual(["eth0 192.168/24", "wg0 10.213/16"]);
  });
});

describe("doctor's pool check", () => {
  const config = (over: Partial<Config["docker"]> = {}): Config => {
    const c = defaults();
    c.docker = { ...c.docker, ...over };
    return c;
  };
  it("says the pool's size and use, and warns of overlaps with routes and networks Sundeck did not make", () => {
    const ok = poolCheck(config(), {
      given: [{ subnet: "10.213.0.0/25", name: "sundeck-a_default" }],
      networks: [net("sundeck-a_default", "10.213.0.0/25")],
      routes: [],
    });
    expect(ok).toEqual({
      name: "docker subnet pool",
      status: "ok",
      detail: "10.213.0.0/16 in /25 blocks: 512 in all, 1 given to app networks (1 of them on the engine now), 511 free",
    });
    const w = poolCheck(config(), {
      given: [],
      networks: [net("lab", "10.213.1.0/24")],
      routes: [{ iface: "wg0", range: parseRange4("10.213.8.0/22")! }],
    });
    expect(w.status).toBe("warn");
    // the route covers 8 blocks, the network 2
    expect(w.detail).toContain("502 free");
    expect(w.detail).toContain("overlaps this host's route 10.213.8.0/22 (wg0)");
    expect(w.detail).toContain("overlaps networks Sundeck did not make: lab 10.213.1.0/24");
  });
  it("fails when nothing is free, warns when off or low", () => {
    const full = poolCheck(config({ subnet_pool: "10.213.0.0/24", subnet_prefix: 25 }), {
      given: [
        { subnet: "10.213.0.0/25", name: "sundeck-a_default" },
        { subnet: "10.213.0.128/25", name: "sundeck-b_default" },
      ],
      networks: [],
      routes: [],
    });
    expect(full.status).toBe("fail");
    expect(full.detail).toContain("0 free: no block is free for a new app network");
    expect(poolCheck(config({ subnet_pool: "" }), { given: null, networks: null, routes: [] }).status).toBe("warn");
  });
});
