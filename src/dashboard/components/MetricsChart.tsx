/**
 * A time-series chart drawn by uPlot on a canvas: sized to its container (ResizeObserver), colours taken from the
 * theme's `--chart-N` tokens (re-created when the theme changes, since a canvas cannot follow CSS), y from 0 to a
 * round maximum, nulls drawn as gaps (spanGaps off), and uPlot's legend with the values under the cursor.
 */
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import type { ChartLine, Columns } from "../metrics";
import { useEffectiveTheme } from "../theme";
import { niceMax } from "./LineChart";

export interface MetricsChartProps {
  /** Accessible name: a summary of what the chart shows. */
  label: string;
  /** uPlot columns: x in seconds, then one column per line. */
  data: Columns;
  lines: ChartLine[];
  /** The time range shown (seconds), so a range only partly covered by samples is not stretched. */
  from: number;
  to: number;
  format(v: number): string;
  height?: number;
  /** A fixed top of the y axis (e.g. 100 for a share); otherwise a round number above the largest value. */
  yMax?: number;
}

const TONES = 6;
const full = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

/** The computed colour of a CSS expression (a `light-dark()` token) in the context of `host`. */
function cssColor(host: HTMLElement, expr: string): string {
  const probe = document.createElement("span");
  probe.style.color = expr;
  probe.style.display = "none";
  host.appendChild(probe);
  const c = getComputedStyle(probe).color;
  probe.remove();
  return c;
}

/** The chart. */
export function MetricsChart({ label, data, lines, from, to, format, height = 180, yMax }: MetricsChartProps) {
  const box = useRef<HTMLElement>(null);
  const plot = useRef<uPlot | null>(null);
  const theme = useEffectiveTheme();
  // the plot's callbacks read the latest props without being re-created
  const latest = useRef({ data, from, to, format, yMax });
  latest.current = { data, from, to, format, yMax };
  const shape = lines.map((l) => `${l.label}\u0000${l.tone}\u0000${l.dash ? 1 : 0}`).join("\u0001");

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const muted = cssColor(el, "var(--muted)");
    const border = cssColor(el, "var(--border)");
    const font = `11px ${getComputedStyle(el).fontFamily}`;
    const fmt = (v: number | null) => (v === null || v === undefined ? "–" : latest.current.format(v));
    const axis = {
      stroke: muted,
      font,
      grid: { stroke: border, width: 1 },
      ticks: { stroke: border, width: 1, size: 4 },
    };
    const opts: uPlot.Options = {
      width: Math.max(200, Math.floor(el.clientWidth)),
      height,
      legend: { live: true },
      cursor: { drag: { x: false, y: false } },
      scales: {
        x: { time: true, range: () => [latest.current.from, latest.current.to] },
        y: { range: (_u, _min, max) => [0, latest.current.yMax ?? niceMax(max)] },
      },
      axes: [
        axis,
        { ...axis, size: 72, values: (_u, splits) => splits.map((v) => (v === null ? "" : latest.current.format(v))) },
      ],
      series: [
        { value: (_u, t) => (t === null ? "–" : full.format(t * 1000)) },
        ...lines.map((l) => ({
          label: l.label,
          stroke: cssColor(el, `var(--chart-${((l.tone - 1) % TONES) + 1})`),
          width: 1.5,
          dash: l.dash ? [5, 4] : undefined,
          spanGaps: false,
          value: (_u: uPlot, v: number | null) => fmt(v),
        })),
      ],
    };
    const u = new uPlot(opts, latest.current.data as uPlot.AlignedData, el);
    plot.current = u;
    const ro = new ResizeObserver(([e]) => {
      const w = Math.max(200, Math.floor(e.contentRect.width));
      if (w !== u.width) u.setSize({ width: w, height });
    });
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [theme, shape, height]);

  useEffect(() => {
    plot.current?.setData(data as uPlot.AlignedData);
  }, [data, from, to, yMax]);

  return <figure class="mchart" ref={box} aria-label={label} />;
}
