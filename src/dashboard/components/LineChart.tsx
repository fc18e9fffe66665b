/**
 * A small time-series line chart drawn as SVG (no charting library, nothing from other origins): y axis from 0 to a
 * round maximum, time ticks, gaps where a value is missing, and a readout of the values under the pointer (or the
 * arrow keys when the chart has focus) in the legend.
 */
import { useEffect, useRef, useState } from "preact/hooks";

export interface ChartSeries {
  label: string;
  values: Array<number | null>;
  /** Colour 1 to 3 (theme tokens --chart-1..3). */
  tone: 1 | 2 | 3;
}

export interface LineChartProps {
  /** Accessible name of the chart; a summary of what it shows. */
  label: string;
  /** Bucket times, ascending (ms since the epoch), one per value. */
  times: number[];
  from: number;
  to: number;
  series: ChartSeries[];
  format(v: number): string;
  height?: number;
}

const PAD = { left: 56, right: 12, top: 10, bottom: 24 };

/** A round number at or above `max` (1, 2, 2.5, 5 times a power of ten). */
export function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const exp = 10 ** Math.floor(Math.log10(max));
  const f = max / exp;
  const nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10;
  return nice * exp;
}

const hm = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const md = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric" });
const full = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

/** An SVG path through the points, broken where a value is missing; lone points come back as dots. */
function pathOf(xs: number[], ys: Array<number | null>): { d: string; dots: Array<[number, number]> } {
  let d = "";
  const dots: Array<[number, number]> = [];
  let run = 0;
  for (let i = 0; i < ys.length; i++) {
    const y = ys[i];
    if (y === null) {
      if (run === 1) dots.push([xs[i - 1], ys[i - 1] as number]);
      run = 0;
      continue;
    }
    d += `${run === 0 ? "M" : "L"}${xs[i].toFixed(1)},${y.toFixed(1)}`;
    run++;
  }
  if (run === 1) dots.push([xs[ys.length - 1], ys[ys.length - 1] as number]);
  return { d, dots };
}

/** Index of the time nearest to `t` (times ascending). */
function nearest(times: number[], t: number): number {
  let lo = 0;
  let hi = times.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (times[mid] <= t) lo = mid;
    else hi = mid;
  }
  return Math.abs(times[hi] - t) < Math.abs(times[lo] - t) ? hi : lo;
}

/** The chart. */
export function LineChart({ label, times, from, to, series, format, height = 200 }: LineChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(640);
  const [hover, setHover] = useState<number | null>(null);
  useEffect(() => {
    const el = box.current;
    if (!el || typeof ResizeObserver === "undefined") return;
    const ro = new ResizeObserver(([e]) => setWidth(Math.max(240, Math.floor(e.contentRect.width))));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  useEffect(() => setHover(null), [times.length, from]);

  const innerW = width - PAD.left - PAD.right;
  const innerH = height - PAD.top - PAD.bottom;
  const span = Math.max(1, to - from);
  let max = 0;
  for (const s of series) for (const v of s.values) if (v !== null && v > max) max = v;
  const top = niceMax(max);
  const x = (t: number) => PAD.left + ((t - from) / span) * innerW;
  const y = (v: number) => PAD.top + innerH - (v / top) * innerH;
  const xs = times.map(x);
  const yTicks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * top);
  const tickFmt = span > 36 * 3_600_000 ? md : hm;
  // fewer time labels on narrow charts so they do not overlap
  const parts = innerW < 360 ? 2 : innerW < 560 ? 3 : 4;
  const xTicks = Array.from({ length: parts + 1 }, (_, i) => from + (i / parts) * span);
  const at = hover !== null && hover < times.length ? hover : null;

  const onPointer = (e: PointerEvent) => {
    if (times.length === 0) return;
    const r = (e.currentTarget as SVGSVGElement).getBoundingClientRect();
    const t = from + ((e.clientX - r.left - PAD.left) / innerW) * span;
    setHover(nearest(times, t));
  };
  const onKey = (e: KeyboardEvent) => {
    if (times.length === 0) return;
    const last = times.length - 1;
    const cur = at ?? last;
    const next =
      e.key === "ArrowLeft" ? cur - 1 : e.key === "ArrowRight" ? cur + 1 : e.key === "Home" ? 0 : e.key === "End" ? last : null;
    if (next === null) return;
    e.preventDefault();
    setHover(Math.min(last, Math.max(0, next)));
  };

  return (
    <div class="chart" ref={box}>
      <ul class="chart-legend">
        {at !== null && (
          <li class="chart-at">
            <time dateTime={new Date(times[at]).toISOString()}>{full.format(times[at])}</time>
          </li>
        )}
        {series.map((s) => {
          const v = at !== null ? s.values[at] : null;
          return (
            <li key={s.label}>
              <span class={`swatch tone-${s.tone}`} aria-hidden="true" />
              {s.label}
              {at !== null && <strong> {v === null ? "–" : format(v)}</strong>}
            </li>
          );
        })}
      </ul>
      <svg
        class="chart-svg"
        width={width}
        height={height}
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label={label}
        // biome-ignore lint/a11y/noNoninteractiveTabindex: focus lets keyboard users read the values with the arrow keys
        tabIndex={0}
        onPointerMove={onPointer}
        onPointerLeave={() => setHover(null)}
        onKeyDown={onKey}
        onBlur={() => setHover(null)}
      >
        {yTicks.map((v) => (
          <g key={v}>
            <line class="chart-grid" x1={PAD.left} x2={width - PAD.right} y1={y(v)} y2={y(v)} />
            <text class="chart-axis" x={PAD.left - 6} y={y(v)} text-anchor="end" dominant-baseline="middle">
              {format(v)}
            </text>
          </g>
        ))}
        {xTicks.map((t, i) => (
          <text
            key={t}
            class="chart-axis"
            x={x(t)}
            y={height - 6}
            text-anchor={i === 0 ? "start" : i === xTicks.length - 1 ? "end" : "middle"}
          >
            {tickFmt.format(t)}
          </text>
        ))}
        {series.map((s) => {
          const { d, dots } = pathOf(
            xs,
            s.values.map((v) => (v === null ? null : y(v))),
          );
          return (
            <g key={s.label} class={`chart-series tone-${s.tone}`}>
              <path class="chart-line" d={d} />
              {dots.map(([cx, cy]) => (
                <circle key={cx} class="chart-dot" cx={cx} cy={cy} r={2.5} />
              ))}
            </g>
          );
        })}
        {at !== null && (
          <g class="chart-hover">
            <line class="chart-cursor" x1={xs[at]} x2={xs[at]} y1={PAD.top} y2={PAD.top + innerH} />
            {series.map((s) =>
              s.values[at] === null ? null : (
                <circle key={s.label} class={`chart-dot tone-${s.tone}`} cx={xs[at]} cy={y(s.values[at] as number)} r={3.5} />
              ),
            )}
          </g>
        )}
      </svg>
    </div>
  );
}
