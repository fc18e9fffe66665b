/** A route's upstreams are taken round-robin, and a retry is offered another replica when there is one. */
import { describe, expect, it } from "bun:test";
import { buildRouteTable } from "../../../src/proxy/route-table";
import { nextUpstream, otherUpstream } from "../../../src/proxy/upstreams";

describe("upstream choice", () => {
  it("balances round-robin and offers another replica for a retry", () => {
    const t = buildRouteTable({
      apps: [
        {
          slug: "a",
          endpoints: [{ service: "web", hosts: ["a.example.com"], port: 80, path: "/", tls: null }],
          labels: { endpoints: [], ratelimit: null, allow: null, registries: null },
          stopped: false,
        },
      ],
      upstreams: () => ["u1", "u2", "u3"],
      defaults: { ratelimit: { requests: 1, windowMs: 1, burst: 1, by: "ip" } },
    });
    const r = t.lookup("a.example.com", "/")!;
    expect(Array.from({ length: 7 }, () => nextUpstream(r))).toEqual(["u1", "u2", "u3", "u1", "u2", "u3", "u1"]);
    expect(otherUpstream(r, "u3")).toBe("u1");
    expect(otherUpstream({ ...r, upstreams: ["u1"] }, "u1")).toBeNull();
    expect(nextUpstream({ ...r, upstreams: [] })).toBeNull();
  });
});
