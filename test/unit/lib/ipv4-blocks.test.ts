import { describe, expect, it } from "bun:test";
import {
  blockCount,
  coveringRange4,
  firstFreeBlock,
  formatRange4,
  isPrivateRange4,
  parseRange4,
} from "../../../src/lib/ipv4-blocks";

const r = (t: string) => parseRange4(t)!;

describe("IPv4 ranges", () => {
  it("parses a network by its own address only, and formats it back", () => {
    expect(formatRange4(r("10.213.0.0/16"))).toBe("10.213.0.0/16");
    expect(r("0.0.0.0/0")).toEqual({ first: 0, last: 2 ** 32 - 1, bits: 0 });
    for (const bad of ["10.213.0.1/16", "10.213.0.0", "256.0.0.0/8", "10.0.0.0/33", "10.0.0/8", " /8", "::1/128"])
      expect(parseRange4(bad)).toBeNull();
    // what a route table or the engine gives: host bits dropped
    expect(formatRange4(coveringRange4("172.18.3.7/16")!)).toBe("172.18.0.0/16");
  });

  it("counts the blocks of a pool", () => {
    expect(blockCount(r("10.213.0.0/16"), 25)).toBe(512);
    expect(blockCount(r("10.213.0.0/16"), 16)).toBe(1);
    expect(blockCount(r("10.213.0.0/16"), 15)).toBe(0);
  });

  it("finds the first block clear of what is taken, jumping past large ranges and across unsorted input", () => {
    const pool = r("10.0.0.0/24");
    expect(formatRange4(firstFreeBlock(pool, 26, [])!)).toBe("10.0.0.0/26");
    expect(formatRange4(firstFreeBlock(pool, 26, [r("10.0.0.64/26"), r("10.0.0.0/26")])!)).toBe("10.0.0.128/26");
    // a /32 in the middle of a block takes the whole block; a range outside the pool takes nothing
    expect(formatRange4(firstFreeBlock(pool, 26, [coveringRange4("10.0.0.5/32")!, r("10.0.1.0/24")])!)).toBe("10.0.0.64/26");
    // a range larger than the pool covers all of it
    expect(firstFreeBlock(pool, 26, [r("10.0.0.0/8")])).toBeNull();
    expect(firstFreeBlock(pool, 26, [r("10.0.0.0/25"), r("10.0.0.128/25")])).toBeNull();
    expect(formatRange4(firstFreeBlock(pool, 26, [r("10.0.0.0/25"), r("10.0.0.128/26")])!)).toBe("10.0.0.192/26");
  });

  it("tells private ranges from public ones", () => {
    for (const t of ["10.213.0.0/16", "172.16.0.0/12", "192.168.4.0/24", "100.64.0.0/10"])
      expect(isPrivateRange4(r(t))).toBe(true);
    for (const t of ["8.8.0.0/16", "172.32.0.0/16", "0.0.0.0/0", "10.0.0.0/7"]) expect(isPrivateRange4(r(t))).toBe(false);
  });
});
