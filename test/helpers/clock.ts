/** A clock tests move by hand. */
import type { Clock } from "../../src/lib/time";

export class FakeClock implements Clock {
  constructor(private t = Date.parse("2026-11-22T12:00:00Z")) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
  set(ms: number): void {
    this.t = ms;
  }
}
