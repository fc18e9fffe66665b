/** Endpoint changes between deploys: null when routing holds, else added, removed, TLS, target, allow, rate limit. */
import { describe, expect, it } from "bun:test";
import type { AppLabels } from "../../../../src/compose/model";
import { diffEndpoints } from "../../../../src/modules/deploys/endpoint-diff";

const labels = (over: Partial<AppLabels> = {}): AppLabels => ({
  endpoints: [{ service: "web", hosts: ["a.example.com"], port: 80, path: "/", tls: null }],
  ratelimit: null,
  allow: null,
  registries: null,
  ...over,
});

describe("endpoint changes", () => {
  it("are null when routing did not change", () => {
    expect(diffEndpoints(labels(), labels())).toBeNull();
  });

  it("name endpoints added and removed", () => {
    const d = diffEndpoints(
      labels(),
      labels({ endpoints: [{ service: "web", hosts: ["b.example.com"], port: 80, path: "/", tls: null }] }),
    )!;
    expect(d.changes).toEqual(["endpoint added: b.example.com → web:80", "endpoint removed: a.example.com → web:80"]);
    expect(diffEndpoints(null, labels())!.changes).toEqual(["endpoint added: a.example.com → web:80"]);
  });

  it("name TLS, target, allowlist and rate-limit changes", () => {
    const d = diffEndpoints(
      labels(),
      labels({
        endpoints: [{ service: "api", hosts: ["a.example.com"], port: 8080, path: "/", tls: "local" }],
        allow: ["10.0.0.0/8"],
        ratelimit: { requests: 10 },
      }),
    )!;
    expect(d.changes).toEqual([
      "endpoint a.example.com now → api:8080",
      "tls of a.example.com: default → local",
      "access: everyone → 10.0.0.0/8",
      'rate limit: none → {"requests":10}',
    ]);
    expect(d.after).toMatchObject({ access_allow: ["10.0.0.0/8"], ratelimit: { requests: 10 } });
  });
});
