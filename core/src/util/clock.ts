/** Time, injectable so tests can control it. */
export interface Clock {
  /** Milliseconds since the epoch. */
  nowMs(): number;
  /** ISO-8601 timestamp. */
  nowIso(): string;
}

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  nowIso: () => new Date().toISOString(),
};
