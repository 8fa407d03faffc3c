import { token } from "./di-token.js";

/** Time, injectable so tests can control it. */
export interface Clock {
  /** Milliseconds since the epoch. */
  nowMs(): number;
  /** ISO-8601 timestamp. */
  nowIso(): string;
  /**
   * Hears that the clock jumped (a test moved it). Timers armed for a moment of this clock use
   * it to re-arm; the system clock never jumps, so it has none.
   */
  onJump?(listener: () => void): () => void;
}

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  nowIso: () => new Date().toISOString(),
};

/** The longest delay setTimeout takes (about 24.8 days); a later moment is reached in steps. */
const MAX_TIMER_DELAY_MS = 2_147_483_647;

/**
 * Calls `fire` once `clock` reaches `atMs`: a timer, re-armed when the clock jumps and stepped
 * for moments beyond setTimeout's range, so it never polls. Returns a function that cancels it.
 * The timer does not keep the process alive.
 */
export function setAlarm(clock: Clock, atMs: number, fire: () => void): () => void {
  let timer: NodeJS.Timeout | null = null;
  let done = false;
  let unsubscribe: (() => void) | undefined;
  const cancel = () => {
    done = true;
    if (timer !== null) clearTimeout(timer);
    timer = null;
    unsubscribe?.();
  };
  const arm = () => {
    if (done) return;
    if (timer !== null) clearTimeout(timer);
    const delay = atMs - clock.nowMs();
    // Due now: still through a timer, so the caller never runs `fire` inside its own call.
    timer = setTimeout(
      () => {
        if (atMs - clock.nowMs() > 0) return arm();
        cancel();
        fire();
      },
      Math.max(0, Math.min(delay, MAX_TIMER_DELAY_MS)),
    );
    timer.unref();
  };
  unsubscribe = clock.onJump?.(arm);
  arm();
  return cancel;
}

/** DI token: the clock (tests may replace it with a manual one). */
export const ClockToken = token<Clock>("Clock");
