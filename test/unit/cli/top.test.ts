/**
 * What `sundeck top` prints from a snapshot: sizes as `docker stats` shows them, the newest point that has values,
 * the host line, memory against the limit when there is one, and "-" for what was not measured.
 */
import { describe, expect, it } from "bun:test";
import { formatBytes, lastPoint, renderTop, type TopRow } from "../../../src/cli/top";

const row = (over: Partial<TopRow>): TopRow => ({
  app: "blog",
  service: "web",
  container: "sundeck-blog-web-1",
  id: "0123456789ab",
  t: "2026-11-22T12:00:00.000Z",
  cpu_pct: null,
  cpu_limit_pct: null,
  mem_bytes: null,
  mem_limit_bytes: null,
  mem_pct: null,
  net_rx_bps: null,
  net_tx_bps: null,
  blk_read_bps: null,
  blk_write_bps: null,
  ...over,
});

describe("sundeck top output", () => {
  it("writes sizes in binary units with one decimal under ten", () => {
    expect([0, 1023, 1024, 1536, 10 * 1024, 64 * 2 ** 20, 1.5 * 2 ** 30, 2 ** 40].map(formatBytes)).toEqual([
      "0B",
      "1023B",
      "1.0KiB",
      "1.5KiB",
      "10KiB",
      "64MiB",
      "1.5GiB",
      "1.0TiB",
    ]);
    expect(formatBytes(null)).toBe("-");
  });

  it("takes the newest point with any value, skipping gaps", () => {
    const gap = { t: "c", cpu_pct: null, mem_bytes: null };
    expect(lastPoint([{ t: "a", cpu_pct: 1, mem_bytes: 1 }, { t: "b", cpu_pct: null, mem_bytes: 5 }, gap])?.t).toBe("b");
    expect(lastPoint([gap, gap])).toBeNull();
    expect(lastPoint([])).toBeNull();
  });

  it("prints the host line, then one row per container with limits and rates, '-' where nothing was measured", () => {
    const text = renderTop({
      at: "2026-11-22T12:00:00.000Z",
      host: { t: "x", cpu_pct: 7.25, load1: 0.5, mem_used_bytes: 2 ** 30, mem_total_bytes: 2 * 2 ** 30 },
      containers: [
        row({
          cpu_pct: 150,
          mem_bytes: 100 * 2 ** 20,
          mem_limit_bytes: 200 * 2 ** 20,
          mem_pct: 50,
          net_rx_bps: 2048,
          net_tx_bps: 0,
        }),
        row({ service: "worker", container: "sundeck-blog-worker-1", t: null }),
      ],
    });
    expect(text.split("\n")).toEqual([
      "host: cpu 7.3%, mem 1.0GiB / 2.0GiB, load 0.50",
      "APP   SERVICE  CONTAINER              CPU %   MEM              MEM %  NET RX / TX      BLOCK R / W",
      "blog  web      sundeck-blog-web-1     150.0%  100MiB / 200MiB  50.0%  2.0KiB/s / 0B/s  -",
      "blog  worker   sundeck-blog-worker-1  -       -                -      -                -",
      "",
    ]);
  });

  it("says so when nothing runs, without a host line when the host is unknown", () => {
    expect(renderTop({ at: "x", host: null, containers: [] })).toBe("no running containers\n");
  });
});
