/**
 * The local-wins merge plan, path by path: every combination of base, local commit, remote and work tree that a
 * pull meets, and what lands in the merge tree and the work tree. (Pure; it lives with the repository tests.)
 */
import { describe, expect, it } from "bun:test";
import { planLocalWins } from "../../../src/modules/gitsync/repo/merge";
import type { Entry, FlatTree } from "../../../src/modules/gitsync/repo/trees";

const P = "web/docker-compose.yml";
const blob = (c: string): Entry => ({ oid: c.padEnd(40, "0"), mode: "100644" });
const [A, B, C, D] = ["a", "b", "c", "d"].map(blob);
const LINK: Entry = { oid: "e".padEnd(40, "0"), mode: "120000" };
const one = (e?: Entry): FlatTree => new Map(e ? [[P, e]] : []);

type Row = {
  name: string;
  base?: Entry;
  local?: Entry;
  remote?: Entry;
  work?: Entry;
  merged?: Entry;
  write?: Entry | null;
  conflict?: boolean;
  ignored?: boolean;
};

const rows: Row[] = [
  { name: "nobody changed it", base: A, local: A, remote: A, work: A, merged: A },
  { name: "remote changed it", base: A, local: A, remote: B, work: A, merged: B, write: B },
  { name: "remote added it", remote: B, merged: B, write: B },
  { name: "remote deleted it", base: A, local: A, work: A, write: null },
  { name: "local committed a change", base: A, local: B, remote: A, work: B, merged: B },
  { name: "both made the same change", base: A, local: B, remote: B, work: B, merged: B },
  { name: "both changed it differently", base: A, local: B, remote: C, work: B, merged: B, conflict: true },
  { name: "local deleted, remote changed", base: A, remote: C, conflict: true },
  { name: "local changed, remote deleted", base: A, local: B, work: B, merged: B, conflict: true },
  { name: "both added it differently", local: B, remote: C, work: B, merged: B, conflict: true },
  { name: "uncommitted edit, remote changed", base: A, local: A, remote: C, work: D, merged: C, conflict: true },
  { name: "uncommitted edit equal to the remote's", base: A, local: A, remote: C, work: C, merged: C },
  { name: "uncommitted edit, remote unchanged", base: A, local: A, remote: A, work: D, merged: A },
  { name: "untracked local file, remote added another", remote: C, work: D, merged: C, conflict: true },
  {
    name: "committed change and a further edit, remote changed",
    base: A,
    local: B,
    remote: C,
    work: D,
    merged: B,
    conflict: true,
  },
  { name: "remote turned it into a symlink", base: A, local: A, remote: LINK, work: A, merged: A, ignored: true },
];

describe("planLocalWins", () => {
  for (const r of rows) {
    it(r.name, () => {
      const plan = planLocalWins({
        base: one(r.base),
        local: one(r.local),
        remote: one(r.remote),
        work: one(r.work),
        allowed: () => true,
      });
      expect(plan.merged.get(P)).toEqual(r.merged);
      expect(plan.writes).toEqual(r.write === undefined ? [] : [{ path: P, entry: r.write }]);
      expect(plan.conflicts).toEqual(r.conflict ? [P] : []);
      expect(plan.ignored).toEqual(r.ignored ? [P] : []);
    });
  }

  it("leaves paths outside the policy out of the merge and never writes them", () => {
    const plan = planLocalWins({
      base: new Map(),
      local: new Map(),
      remote: new Map([
        ["sundeck.db", A],
        ["web/data/x", B],
      ]),
      work: new Map(),
      allowed: (p) => p === P,
    });
    expect([...plan.merged.keys()]).toEqual([]);
    expect(plan.writes).toEqual([]);
    expect(plan.ignored).toEqual(["sundeck.db", "web/data/x"]);
  });

  it("never writes a name that could leave the work tree, whatever the policy says", () => {
    const names = ["../x", "a/../../x", ".git/hooks/post-checkout", "web/.GIT/config", "a\\b", "/etc/passwd", "a//b"];
    const plan = planLocalWins({
      base: new Map(),
      local: new Map(),
      remote: new Map(names.map((n) => [n, A])),
      work: new Map(),
      allowed: () => true,
    });
    expect(plan.writes).toEqual([]);
    expect(plan.ignored.sort()).toEqual([...names].sort());
  });
});
