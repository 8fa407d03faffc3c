import { Cron } from "croner";
import type { ScheduleSpec, ScheduledTaskRecord } from "../../store/records.js";

/** The schedules that fire on their own (webhooks fire on requests). */
export type TimedSchedule = Exclude<ScheduleSpec, { type: "webhook" }>;

/** True for interval and fixed-time schedules. */
export function isTimed(schedule: ScheduleSpec): schedule is TimedSchedule {
  return schedule.type !== "webhook";
}

const patterns = new Map<string, Cron>();

/**
 * A cron pattern in the server's time zone (undefined: the process's local zone), parsed once.
 * Croner decides daylight-saving changes: a fixed-time job whose time falls in a spring-forward
 * gap runs at the first valid time after it and once on a repeated hour; a job with wildcards or
 * steps skips the gap's times and runs on both occurrences of a repeated hour.
 */
export function cronPattern(pattern: string, timeZone: string | undefined): Cron {
  const key = `${timeZone ?? ""}\u0000${pattern}`;
  let cron = patterns.get(key);
  if (cron === undefined) {
    cron = new Cron(pattern, {
      paused: true,
      mode: "5-or-6-parts",
      ...(timeZone !== undefined ? { timezone: timeZone } : {}),
    });
    if (patterns.size > 1_000) patterns.clear();
    patterns.set(key, cron);
  }
  return cron;
}

/** The first occurrence strictly after `afterMs`, or null when there is none (a one-shot that passed). */
export function nextOccurrence(
  schedule: TimedSchedule,
  anchorMs: number,
  afterMs: number,
  timeZone: string | undefined,
): number | null {
  switch (schedule.type) {
    case "interval": {
      const k = Math.max(1, Math.floor((afterMs - anchorMs) / schedule.everyMs) + 1);
      return anchorMs + k * schedule.everyMs;
    }
    case "fixed_time": {
      if ("at" in schedule) {
        const at = Date.parse(schedule.atInstant);
        return at > afterMs ? at : null;
      }
      return cronPattern(schedule.cron, timeZone).nextRun(new Date(afterMs))?.getTime() ?? null;
    }
  }
}

/** How many coalesced occurrences are counted exactly before the count stops (it is then "at least"). */
const COALESCE_COUNT_LIMIT = 10_000;

/**
 * The latest occurrence in `(fromMs, nowMs]`, and how many earlier ones in that span it stands
 * for: a scheduler that was down (or asleep) fires a schedule once for everything it missed.
 */
export function latestDueOccurrence(
  schedule: TimedSchedule,
  anchorMs: number,
  fromMs: number,
  nowMs: number,
  timeZone: string | undefined,
): { atMs: number; coalesced: number } | null {
  switch (schedule.type) {
    case "interval": {
      const slotNow = Math.floor((nowMs - anchorMs) / schedule.everyMs);
      if (slotNow < 1) return null;
      const atMs = anchorMs + slotNow * schedule.everyMs;
      if (atMs <= fromMs) return null;
      const slotFrom = Math.max(0, Math.floor((fromMs - anchorMs) / schedule.everyMs));
      return { atMs, coalesced: Math.max(0, slotNow - slotFrom - 1) };
    }
    case "fixed_time": {
      if ("at" in schedule) {
        const at = Date.parse(schedule.atInstant);
        return at > fromMs && at <= nowMs ? { atMs: at, coalesced: 0 } : null;
      }
      const cron = cronPattern(schedule.cron, timeZone);
      const first = cron.nextRun(new Date(fromMs));
      if (first === null || first.getTime() > nowMs) return null;
      let latest = first.getTime();
      let coalesced = 0;
      for (;;) {
        const next = cron.nextRun(new Date(latest));
        if (next === null || next.getTime() > nowMs) break;
        latest = next.getTime();
        coalesced += 1;
        if (coalesced >= COALESCE_COUNT_LIMIT) {
          // Counting stops; the latest due one is found directly.
          latest = cron.previousRuns(1, new Date(nowMs + 1))[0]?.getTime() ?? latest;
          break;
        }
      }
      return { atMs: latest, coalesced };
    }
  }
}

/** Where a task's occurrences count from: after its anchor and after the last one it fired for. */
export function occurrencesFrom(task: ScheduledTaskRecord, lastScheduledFor: string | null): number {
  const anchor = Date.parse(task.anchorAt);
  return lastScheduledFor === null ? anchor : Math.max(anchor, Date.parse(lastScheduledFor));
}
