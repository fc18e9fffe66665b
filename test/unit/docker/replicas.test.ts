/** Only running, healthy or unchecked replicas of the service on the proxy network become upstream addresses. */
import { describe, expect, it } from "bun:test";
import { boardUpstreams, replicaAddresses } from "../../../src/docker/replicas";
import type { ContainerSummary } from "../../../src/docker/types";

function c(over: Partial<ContainerSummary>): ContainerSummary {
  return {
    id: "x",
    name: "x",
    image: "img",
    state: "running",
    status: "Up",
    health: null,
    labels: {},
    service: "web",
    project: "sundeck-shop",
    number: 1,
    networks: { "sundeck-public": "172.20.0.2" },
    ports: [],
    createdAt: 0,
    ...over,
  };
}

describe("upstreams from containers", () => {
  it("keeps running, healthy or unchecked replicas of the service on the proxy network", () => {
    const list = [
      c({ networks: { "sundeck-public": "172.20.0.2" } }),
      c({ networks: { "sundeck-public": "172.20.0.3" }, health: "healthy" }),
      c({ networks: { "sundeck-public": "172.20.0.4" }, health: "unhealthy" }),
      c({ networks: { "sundeck-public": "172.20.0.5" }, health: "starting" }),
      c({ networks: { "sundeck-public": "172.20.0.6" }, state: "exited" }),
      c({ networks: { "sundeck-public": "172.20.0.7" }, state: "restarting" }),
      c({ networks: { "sundeck-shop_default": "172.21.0.2" } }),
      c({ networks: { "sundeck-public": "172.20.0.8" }, service: "db" }),
      c({ networks: { "sundeck-public": "fd00::9" } }),
    ];
    expect(replicaAddresses(list, "web", 8080)).toEqual(["172.20.0.2:8080", "172.20.0.3:8080", "[fd00::9]:8080"]);
    expect(replicaAddresses(list, "db", 5432)).toEqual(["172.20.0.8:5432"]);
    const upstreams = boardUpstreams({ containers: (slug) => (slug === "shop" ? list : []) });
    expect(upstreams("shop", "web", 80)).toHaveLength(3);
    expect(upstreams("other", "web", 80)).toEqual([]);
  });
});
