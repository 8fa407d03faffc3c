import type { Clock } from "../../src/util/clock.js";

/**
 * A clock a test moves: real time plus an offset the test sets, telling the timers armed on it
 * (`Clock.onJump`) whenever it jumps, so a schedule fires at a moment the test chooses.
 */
export class JumpClock implements Clock {
  private offsetMs = 0;
  private readonly listeners = new Set<() => void>();

  nowMs(): number {
    return Date.now() + this.offsetMs;
  }

  nowIso(): string {
    return new Date(this.nowMs()).toISOString();
  }

  onJump(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Jumps to an instant. */
  set(atMs: number): void {
    this.offsetMs = atMs - Date.now();
    for (const listener of [...this.listeners]) listener();
  }

  /** Jumps forward (or back) by `ms`. */
  advance(ms: number): void {
    this.set(this.nowMs() + ms);
  }
}
