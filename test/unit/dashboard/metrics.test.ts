/** The metrics charts' arithmetic (metrics.ts, charts.ts): one time line for every series, gaps kept, totals, formats. */
import { describe, expect, test } from "bun:test";
import { appCharts, diskWords, hostCharts } from "../../../src/dashboard/charts";
import {
  alignColumns,
  containerLabel,
  formatPct,
  formatRate,
  formatSize,
  metricsPollMs,
  parseMetricRange,
  sumSamples,
} from "../../../src/dashboard/metrics";
import type { AppMetrics, ContainerPoint, SystemMetrics, SystemPoint } from "../../../src/shared/metrics";

const T0 = Date.parse("2026-05-01T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();
const s = (ms: number) => Math.floor(ms / 1000);

const point = (t: number, v: Partial<ContainerPoint> = {}): ContainerPoint => ({
  t: iso(t),
  cpu_pct: null,
  cpu_limit_pct: null,
  mem_bytes: null,
  mem_limit_bytes: null,
  net_rx_bps: null,
  net_tx_bps: null,
  blk_read_bps: null,
  blk_write_bps: null,
  cpu_pct_max: null,
  mem_bytes_max: null,
  restarts: null,
  ...v,
});

const app = (containers: AppMetrics["containers"]): AppMetrics => ({
  range: "1h",
  tier: "raw",
  step_seconds: 10,
  from: iso(T0 - 3_600_000),
  to: iso(T0),
  containers,
});

describe("metrics columns", () => {
  test("ranges default to 1h; the last hour refreshes at the collector's pace, longer ones every minute", () => {
    expect(parseMetricRange("30d")).toBe("30d");
    expect(parseMetricRange("6h")).toBe("1h");
    expect(parseMetricRange(null)).toBe("1h");
    expect(metricsPollMs("1h")).toBe(10_000);
    expect(metricsPollMs("1y")).toBe(60_000);
  });

  test("series with different times share one time line in seconds, null where a series has no sample", () => {
    const cols = alignColumns(
      [
        [
          [T0, 1],
          [T0 + 10_000, 2],
        ],
        [
          [T0 + 10_000, 5],
          [T0 + 20_000, 6],
        ],
      ],
      10,
    );
    expect(cols).toEqual([
      [s(T0), s(T0 + 10_000), s(T0 + 20_000)],
      [1, 2, null],
      [null, 5, 6],
    ]);
  });

  test("an explicit gap stays null, and a hole in the time line gets a null row so the line breaks", () => {
    const cols = alignColumns(
      [
        [
          [T0, 1],
          [T0 + 10_000, null],
          [T0 + 20_000, 3],
          [T0 + 60_000, 4],
        ],
      ],
      10,
    );
    expect(cols[0]).toEqual([s(T0), s(T0 + 10_000), s(T0 + 20_000), s(T0 + 30_000), s(T0 + 60_000)]);
    expect(cols[1]).toEqual([1, null, 3, null, 4]);
  });

  test("totals add the containers that have a value and stay null where none has", () => {
    expect(
      sumSamples([
        [
          [T0, 1],
          [T0 + 10_000, null],
        ],
        [
          [T0, 2],
          [T0 + 10_000, null],
          [T0 + 20_000, 4],
        ],
      ]),
    ).toEqual([
      [T0, 3],
      [T0 + 10_000, null],
      [T0 + 20_000, 4],
    ]);
  });

  test("container names lose the compose project prefix", () => {
    expect(containerLabel("sundeck-blog-web-1", "blog")).toBe("web-1");
    expect(containerLabel("/sundeck-blog_web_2", "blog")).toBe("web_2");
    expect(containerLabel("other", "blog")).toBe("other");
  });

  test("formats in binary units and percent", () => {
    expect(formatSize(512)).toBe("512 B");
    expect(formatSize(1536 * 1024 * 1024)).toBe("1.5 GiB");
    expect(formatRate(2048)).toBe("2 KiB/s");
    expect(formatPct(99.44)).toBe("99.4%");
    expect(formatPct(2.345)).toBe("2.35%");
  });
});

describe("app charts", () => {
  test("a range with only gaps is the empty state", () => {
    expect(appCharts(app([]), "blog")).toBeNull();
    expect(appCharts(app([{ id: "a", name: "sundeck-blog-web-1", service: "web", points: [point(T0)] }]), "blog")).toBeNull();
  });

  test("CPU per container, memory with each limit dashed, network and disk as app totals", () => {
    const charts = appCharts(
      app([
        {
          id: "a",
          name: "sundeck-blog-web-1",
          service: "web",
          points: [
            point(T0, { cpu_pct: 50, mem_bytes: 100, mem_limit_bytes: 1000, net_rx_bps: 10, blk_write_bps: 7 }),
            point(T0 + 10_000),
          ],
        },
        {
          id: "b",
          name: "sundeck-blog-web-2",
          service: "web",
          points: [point(T0, { cpu_pct: 25, mem_bytes: 200, net_rx_bps: 5 }), point(T0 + 10_000, { cpu_pct: 30 })],
        },
      ]),
      "blog",
    )!;
    expect(charts.map((c) => c.id)).toEqual(["cpu", "memory", "network", "disk"]);
    const [cpu, mem, net, disk] = charts;
    expect(cpu.lines.map((l) => l.label)).toEqual(["web-1", "web-2"]);
    expect(cpu.data.slice(1)).toEqual([
      [50, null],
      [25, 30],
    ]);
    expect(mem.lines).toEqual([
      { label: "web-1", tone: 1 },
      { label: "web-1 limit", tone: 1, dash: true },
      { label: "web-2", tone: 2 },
    ]);
    expect(net.data[1]).toEqual([15, null]);
    expect(disk.data[2]).toEqual([7, null]);
    expect(cpu.label).toContain("web-2 now 30%, peak 30%");
  });
});

describe("host charts", () => {
  const hp = (t: number, v: Partial<SystemPoint> = {}): SystemPoint => ({
    t: iso(t),
    cpu_pct: null,
    cpu_pct_max: null,
    load1: null,
    load5: null,
    load15: null,
    mem_used_bytes: null,
    mem_total_bytes: null,
    swap_used_bytes: null,
    swap_total_bytes: null,
    disk_free_bytes: null,
    disk_total_bytes: null,
    docker_disk_free_bytes: null,
    docker_disk_total_bytes: null,
    net_rx_bps: null,
    net_tx_bps: null,
    ...v,
  });
  const sys = (points: SystemPoint[]): SystemMetrics => ({
    range: "1h",
    tier: "raw",
    step_seconds: 10,
    from: iso(T0 - 3_600_000),
    to: iso(T0),
    points,
  });

  test("disks as percent free with the latest in words; nothing sampled is the empty state", () => {
    expect(hostCharts(sys([hp(T0)]))).toBeNull();
    const m = sys([
      hp(T0, {
        cpu_pct: 12,
        disk_free_bytes: 25 * 2 ** 30,
        disk_total_bytes: 100 * 2 ** 30,
        docker_disk_free_bytes: 1,
        docker_disk_total_bytes: 4,
      }),
      hp(T0 + 10_000),
    ]);
    const charts = hostCharts(m)!;
    const disk = charts.find((c) => c.id === "disk")!;
    expect(disk.yMax).toBe(100);
    expect(disk.data.slice(1)).toEqual([
      [25, null],
      [25, null],
    ]);
    expect(diskWords(m, "disk_free_bytes", "disk_total_bytes")).toBe("25 GiB free of 100 GiB (25%)");
  });
});
