import { InvalidArgumentError } from "commander";

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 } as const;

/** The longest duration any option accepts: a year. */
export const MAX_DURATION_MS = 365 * UNIT_MS.d;

const EXAMPLES = "30s, 15m, 12h, 30d or 1w";

/**
 * Parses a duration option (`--ttl`): a whole number and a unit, s, m, h, d or w, from 1s up to
 * 365d. A bare number is refused: `30` could mean seconds, minutes or days.
 */
export function parseDuration(value: string): number {
  const text = value.trim();
  if (/^\d+$/.test(text)) throw new InvalidArgumentError(`"${value}" has no unit; write it with one: ${EXAMPLES}.`);
  const match = /^(\d+)\s*([smhdw])$/.exec(text);
  if (match === null)
    throw new InvalidArgumentError(`"${value}" is not a duration; write a number and a unit: ${EXAMPLES}.`);
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  if (ms <= 0) throw new InvalidArgumentError(`"${value}" is not a positive duration; the shortest is 1s.`);
  if (ms > MAX_DURATION_MS)
    throw new InvalidArgumentError(
      `"${value}" is longer than the limit of 365d; issue a shorter one (and a new one when it expires).`,
    );
  return ms;
}
