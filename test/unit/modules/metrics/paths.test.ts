/** Request paths group by route in the stats: id-like segments become :id, and long paths are cut. */
import { describe, expect, it } from "bun:test";
import { normalizePath } from "../../../../src/modules/metrics/paths";

describe("path normalisation", () => {
  const cases: Array<[string, string]> = [
    ["/", "/"],
    ["/users", "/users"],
    ["/users/123", "/users/:id"],
    ["/users/123/posts/45", "/users/:id/posts/:id"],
    ["/users/123/", "/users/:id/"],
    ["/orders/550e8400-e29b-41d4-a716-446655440000", "/orders/:id"],
    ["/orders/550E8400-E29B-41D4-A716-446655440000/items", "/orders/:id/items"],
    ["/commits/9fceb02d0ae598e95dc970b74767f19372d61af8", "/commits/:id"],
    ["/objects/507f1f77bcf86cd799439011", "/objects/:id"],
    ["/t/aB3dE5fG7hJ9kL1mN3pQ5rS7tU9", "/t/:id"],
    ["/blog/my-first-post", "/blog/my-first-post"],
    ["/api/v2/items", "/api/v2/items"],
    ["/cafe", "/cafe"],
    ["/static/app.3f2a.js", "/static/app.3f2a.js"],
  ];
  for (const [raw, want] of cases) it(`turns ${raw} into ${want}`, () => expect(normalizePath(raw)).toBe(want));

  it("returns a path with nothing to replace unchanged and cuts long ones", () => {
    const p = "/a/b/c";
    expect(normalizePath(p)).toBe(p);
    expect(normalizePath(`/${"x".repeat(500)}`).length).toBe(160);
  });
});
