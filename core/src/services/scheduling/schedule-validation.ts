import type { Cron } from "croner";
import type { SchedulingConfig } from "../../config/config-schema.js";
import { OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import type { WebhookDedupe, WebhookFilter } from "../../store/records.js";
import { cronPattern, type TimedSchedule } from "./schedule-occurrences.js";
import { parseJsonPath } from "./webhook-filters.js";

/**
 * A webhook's signature as asked for: none, a secret the caller chose (the one its sender is
 * configured with), or one Switchyard generates and shows once.
 */
export type SignatureInput = "none" | "generate" | { readonly secret: string };

/** A schedule as a caller writes it (schedule_task `schedule`). */
export type ScheduleInput =
  | { readonly type: "interval"; readonly everyMs: number }
  | { readonly type: "fixed_time"; readonly cron?: string | undefined; readonly at?: string | undefined }
  | {
      readonly type: "webhook";
      /** Omitted on create: none; omitted on update: the task keeps its signature. */
      readonly signature?: SignatureInput | undefined;
      readonly filters?: readonly WebhookFilter[] | undefined;
      readonly dedupe?:
        | {
            readonly deliveryIdHeader?: string | undefined;
            readonly bodyHash?: boolean | undefined;
            readonly windowMs?: number | undefined;
          }
        | undefined;
    };

/** A checked webhook schedule, its secret not sealed yet (sealing needs the task id). */
export interface CheckedWebhook {
  readonly type: "webhook";
  readonly signature: SignatureInput | undefined;
  readonly filters: readonly WebhookFilter[];
  readonly dedupe: WebhookDedupe | null;
}

/** A checked schedule. */
export type CheckedSchedule = TimedSchedule | CheckedWebhook;

/** The longest interval: a year. */
const MAX_INTERVAL_MS = 366 * 86_400_000;
const MAX_FILTERS = 20;
const DEFAULT_DEDUPE_WINDOW_MS = 86_400_000;
const MAX_DEDUPE_WINDOW_MS = 30 * 86_400_000;
const MIN_SECRET_CHARS = 16;
const MAX_SECRET_CHARS = 512;
/** How many upcoming cron runs are checked against the interval floor. */
const CRON_GAP_SAMPLES = 48;

/** RFC 9110 token characters: what a header name may be made of. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
/** An ISO 8601 date and time, with an optional offset (without one it is the server's local time). */
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?(?:Z|[+-](\d{2}):(\d{2}))?$/;

/** Whether the fields of an ISO date and time name a real calendar moment (croner would roll 02-30 over to March). */
function fieldsExist(match: RegExpExecArray): boolean {
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = match
    .slice(1)
    .map((part) => (part === undefined ? 0 : Number(part)));
  const daysInMonth = new Date(Date.UTC(year!, month!, 0)).getUTCDate();
  return (
    month! >= 1 &&
    month! <= 12 &&
    day! >= 1 &&
    day! <= daysInMonth &&
    hour! <= 23 &&
    minute! <= 59 &&
    second! <= 59 &&
    offsetHours! <= 14 &&
    offsetMinutes! <= 59
  );
}

function invalid(message: string, field: string): OrchestratorFailure {
  return new OrchestratorFailure("invalid_request", message, { field });
}

/** A time zone's name, for messages. */
export function timeZoneName(config: SchedulingConfig): string {
  return config.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
}

function checkCron(pattern: string, config: SchedulingConfig, nowMs: number): TimedSchedule {
  let cron: Cron;
  try {
    cron = cronPattern(pattern.trim(), config.timeZone);
  } catch (error) {
    throw invalid(
      `schedule.cron "${pattern}" is not a cron expression: ${(error as Error).message.replace(/^CronPattern: /, "")}. Use five fields (minute hour day month weekday, e.g. "0 9 * * 1-5") or six with seconds first.`,
      "schedule.cron",
    );
  }
  const upcoming = cron.nextRuns(CRON_GAP_SAMPLES, new Date(nowMs)).map((date) => date.getTime());
  if (upcoming.length === 0)
    throw invalid(`schedule.cron "${pattern}" never fires (no date matches it).`, "schedule.cron");
  for (let i = 1; i < upcoming.length; i += 1) {
    const gap = upcoming[i]! - upcoming[i - 1]!;
    if (gap < config.minIntervalMs) {
      throw invalid(
        `schedule.cron "${pattern}" fires ${gap} ms apart, more often than the ${config.minIntervalMs} ms floor (scheduling.minIntervalMs); use a coarser expression.`,
        "schedule.cron",
      );
    }
  }
  return { type: "fixed_time", cron: pattern.trim() };
}

function checkAt(at: string, config: SchedulingConfig, nowMs: number): TimedSchedule {
  const text = at.trim();
  const match = ISO_DATE_TIME.exec(text);
  if (match === null) {
    throw invalid(
      `schedule.at "${at}" is not an ISO 8601 date and time such as "2030-01-31T09:00" (the server's local time, ${timeZoneName(config)}) or "2030-01-31T08:00:00Z".`,
      "schedule.at",
    );
  }
  if (!fieldsExist(match))
    throw invalid(
      `schedule.at "${at}" is not a date and time that exists (check the month, day, hour and offset).`,
      "schedule.at",
    );
  let instant: number | null;
  try {
    instant = cronPattern(text, config.timeZone).nextRun(new Date(nowMs))?.getTime() ?? null;
  } catch {
    throw invalid(
      `schedule.at "${at}" is not a date and time that exists (check the month, day, hour and offset).`,
      "schedule.at",
    );
  }
  if (instant === null)
    throw invalid(
      `schedule.at "${at}" is in the past (now is ${new Date(nowMs).toISOString()}); give a later time.`,
      "schedule.at",
    );
  return { type: "fixed_time", at: text, atInstant: new Date(instant).toISOString() };
}

function checkFilters(filters: readonly WebhookFilter[]): WebhookFilter[] {
  if (filters.length > MAX_FILTERS)
    throw invalid(`schedule.filters has ${filters.length} filters; at most ${MAX_FILTERS}.`, "schedule.filters");
  return filters.map((filter, index) => {
    if ("header" in filter) {
      if (!HEADER_NAME.test(filter.header))
        throw invalid(
          `schedule.filters[${index}].header "${filter.header}" is not an HTTP header name.`,
          `schedule.filters[${index}].header`,
        );
      return { header: filter.header.toLowerCase(), equals: filter.equals };
    }
    const parsed = parseJsonPath(filter.jsonPath);
    if ("problem" in parsed)
      throw invalid(
        `schedule.filters[${index}].jsonPath "${filter.jsonPath}" ${parsed.problem}.`,
        `schedule.filters[${index}].jsonPath`,
      );
    return { jsonPath: filter.jsonPath, equals: filter.equals };
  });
}

function checkWebhook(input: Extract<ScheduleInput, { type: "webhook" }>): CheckedWebhook {
  const signature = input.signature;
  if (signature !== undefined && typeof signature === "object") {
    const length = signature.secret.length;
    if (length < MIN_SECRET_CHARS || length > MAX_SECRET_CHARS) {
      throw invalid(
        `schedule.signature.secret must be ${MIN_SECRET_CHARS} to ${MAX_SECRET_CHARS} characters (it has ${length}); or pass signature: "generate" to get one.`,
        "schedule.signature.secret",
      );
    }
  }
  let dedupe: WebhookDedupe | null = null;
  if (input.dedupe !== undefined) {
    const header = input.dedupe.deliveryIdHeader;
    if (header !== undefined && !HEADER_NAME.test(header))
      throw invalid(
        `schedule.dedupe.deliveryIdHeader "${header}" is not an HTTP header name.`,
        "schedule.dedupe.deliveryIdHeader",
      );
    const bodyHash = input.dedupe.bodyHash ?? header === undefined;
    if (header === undefined && !bodyHash)
      throw invalid("schedule.dedupe needs a deliveryIdHeader, bodyHash: true, or both.", "schedule.dedupe");
    const windowMs = input.dedupe.windowMs ?? DEFAULT_DEDUPE_WINDOW_MS;
    if (!Number.isInteger(windowMs) || windowMs < 1_000 || windowMs > MAX_DEDUPE_WINDOW_MS) {
      throw invalid(
        `schedule.dedupe.windowMs must be a whole number of milliseconds from 1000 to ${MAX_DEDUPE_WINDOW_MS} (30 days).`,
        "schedule.dedupe.windowMs",
      );
    }
    dedupe = { deliveryIdHeader: header?.toLowerCase() ?? null, bodyHash, windowMs };
  }
  return { type: "webhook", signature, filters: checkFilters(input.filters ?? []), dedupe };
}

/**
 * Checks a schedule against the rules and the server's floor, and normalizes it: an interval
 * at or above `scheduling.minIntervalMs`; a cron expression that fires, never more often than
 * that floor; a one-shot time that exists and is in the future, read in the server's time zone
 * unless it carries an offset; webhook filters, dedupe and secret within their limits.
 */
export function checkSchedule(input: ScheduleInput, config: SchedulingConfig, nowMs: number): CheckedSchedule {
  switch (input.type) {
    case "interval":
      if (!Number.isInteger(input.everyMs) || input.everyMs < config.minIntervalMs || input.everyMs > MAX_INTERVAL_MS) {
        throw invalid(
          `schedule.everyMs ${input.everyMs} is outside ${config.minIntervalMs} (the floor, scheduling.minIntervalMs) to ${MAX_INTERVAL_MS} (a year) milliseconds.`,
          "schedule.everyMs",
        );
      }
      return { type: "interval", everyMs: input.everyMs };
    case "fixed_time": {
      const hasCron = input.cron !== undefined;
      const hasAt = input.at !== undefined;
      if (hasCron === hasAt)
        throw invalid(
          'A fixed_time schedule takes exactly one of cron (recurring, e.g. "0 9 * * 1-5") or at (one time, e.g. "2030-01-31T09:00").',
          "schedule",
        );
      return hasCron ? checkCron(input.cron!, config, nowMs) : checkAt(input.at!, config, nowMs);
    }
    case "webhook":
      return checkWebhook(input);
  }
}
