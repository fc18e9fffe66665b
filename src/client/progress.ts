/**
 * Progress of long work: deploy output as plain `[action] line` lines on stdout, and on a terminal a spinner status
 * line on stderr (cleared before each output line and redrawn after it).
 */
import type { DeployFrame } from "../shared/deploys";

const SPIN = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

interface Out {
  write(s: string): unknown;
  isTTY?: boolean;
}

/** A status line with output lines above it. */
export class Progress {
  private timer: ReturnType<typeof setInterval> | null = null;
  private label = "";
  private started = 0;
  private tick = 0;
  private drawn = false;

  constructor(
    private readonly out: Out = process.stdout,
    private readonly err: Out = process.stderr,
    private readonly tty = !!process.stderr.isTTY,
  ) {}

  /** Show `label` with a spinner (terminal only). */
  start(label: string): void {
    this.label = label;
    this.started = Date.now();
    if (!this.tty || this.timer) return;
    this.timer = setInterval(() => this.draw(), 100);
    this.draw();
  }

  /** A line of output. */
  line(text: string): void {
    this.clear();
    this.out.write(`${text}\n`);
    this.draw();
  }

  /** A deploy frame as `[action] output`. */
  frame = (f: DeployFrame): void => {
    for (const l of f.output.split("\n")) if (l.trim()) this.line(`[${f.action}] ${l.replace(/\s+$/, "")}`);
  };

  /** Remove the status line. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.clear();
  }

  private draw(): void {
    if (!this.timer) return;
    const secs = Math.floor((Date.now() - this.started) / 1000);
    this.err.write(`\r\x1b[K${SPIN[this.tick++ % SPIN.length]} ${this.label} ${secs}s`);
    this.drawn = true;
  }

  private clear(): void {
    if (!this.drawn) return;
    this.err.write("\r\x1b[K");
    this.drawn = false;
  }
}
