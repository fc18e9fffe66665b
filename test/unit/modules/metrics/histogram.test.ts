/** The latency histogram reads percentiles back within 5% of the exact values, from 0.1 ms to 60 s. */
import { describe, expect, it } from "bun:test";
import { HIST_BUCKETS, histIndex, newHist, percentiles } from "../../../../src/modules/metrics/histogram";

describe("latency histogram", () => {
  it("reads p50/p95/p99 within 5% of the exact values", () => {
    // a log-normal-ish spread from 0.2 ms to 20 s
    const samples: number[] = [];
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 100_000; i++) samples.push(0.2 * Math.exp(rand() * Math.log(100_000)));
    const h = newHist();
    for (const s of samples) h[histIndex(s)]++;
    samples.sort((a, b) => a - b);
    const exact = [0.5, 0.95, 0.99].map((q) => samples[Math.ceil(q * samples.length) - 1]);
    const got = percentiles(h);
    for (let i = 0; i < 3; i++) expect(Math.abs(got[i] - exact[i]) / exact[i]).toBeLessThan(0.05);
  });

  it("is exact enough at the edges and empty", () => {
    const h = newHist();
    expect(percentiles(h)).toEqual([0, 0, 0]);
    h[histIndex(0.01)]++;
    expect(percentiles(h, [0.5])[0]).toBe(0.1);
    h[histIndex(120_000)] += 10;
    expect(percentiles(h, [0.99])[0]).toBe(60_000);
    for (const ms of [0.1, 1, 12.3, 250, 999, 59_000]) {
      const one = newHist();
      one[histIndex(ms)]++;
      expect(Math.abs(percentiles(one, [0.5])[0] - ms) / ms).toBeLessThan(0.05);
    }
    expect(HIST_BUCKETS).toBeLessThan(200);
  });
});
