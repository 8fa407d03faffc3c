import { describe, expect, it } from "vitest";
import { customSnoozeTime, localInputValue, snoozeChoices } from "../../src/model/snooze-times.js";

describe("the thread menu's snooze times", () => {
  it("offers an hour from now and tomorrow at 9:00 local time, even late in the evening", () => {
    const evening = new Date(2026, 11, 31, 23, 30);
    const [hour, morning] = snoozeChoices(evening);
    expect(hour!.until.getTime() - evening.getTime()).toBe(3_600_000);
    expect([morning!.until.getFullYear(), morning!.until.getMonth(), morning!.until.getDate()]).toEqual([2027, 0, 1]);
    expect([morning!.until.getHours(), morning!.until.getMinutes()]).toEqual([9, 0]);
  });

  it("takes a custom local time only when it is readable and in the future", () => {
    const now = new Date(2026, 11, 7, 12, 0);
    expect(customSnoozeTime("", now)).toBe("Pick a date and time.");
    expect(customSnoozeTime("soon", now)).toBe('"soon" is not a date and time.');
    expect(customSnoozeTime("2026-12-07T11:59", now)).toBe("Pick a time in the future.");
    expect(customSnoozeTime("2026-12-07T12:30", now)).toEqual(new Date(2026, 11, 7, 12, 30));
    expect(localInputValue(new Date(2026, 0, 5, 7, 3))).toBe("2026-01-05T07:03");
  });
});
