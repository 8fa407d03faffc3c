/** A snooze choice the thread menu offers: its label and the moment it wakes the thread. */
export interface SnoozeChoice {
  readonly label: string;
  readonly until: Date;
}

/** The hour "tomorrow morning" means, in the browser's time zone. */
const MORNING_HOUR = 9;

/** The menu's fixed choices at `now`: in an hour, and tomorrow at 9:00 local time. */
export function snoozeChoices(now: Date): SnoozeChoice[] {
  const tomorrow = new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1, MORNING_HOUR, 0, 0, 0);
  return [
    { label: "1 hour", until: new Date(now.getTime() + 3_600_000) },
    { label: "Tomorrow morning", until: tomorrow },
  ];
}

/**
 * A custom time from a `datetime-local` input (local time, no zone), or why it cannot be used:
 * empty, unreadable, or not in the future (the server refuses that too, but the menu says so first).
 */
export function customSnoozeTime(value: string, now: Date): Date | string {
  if (value.trim() === "") return "Pick a date and time.";
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) return `"${value}" is not a date and time.`;
  if (at.getTime() <= now.getTime()) return "Pick a time in the future.";
  return at;
}

/** `until` as the `datetime-local` input's value (local time, to the minute). */
export function localInputValue(until: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${until.getFullYear()}-${pad(until.getMonth() + 1)}-${pad(until.getDate())}T${pad(until.getHours())}:${pad(until.getMinutes())}`;
}
