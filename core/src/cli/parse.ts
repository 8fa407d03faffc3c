import { InvalidArgumentError } from "commander";

/** Parses a TCP port (0 = any free port). */
export function parsePort(value: string): number {
  // Digits only: Number("") and Number(" ") are 0, which would quietly pick a random port.
  const port = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError(`"${value}" is not a port (0-65535; 0 picks a free one).`);
  return port;
}

/** Parses a duration like 30s, 15m, 8h, 7d or plain milliseconds. */
export function parseDuration(value: string): number {
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(value.trim());
  if (match === null) throw new InvalidArgumentError(`"${value}" is not a duration (examples: 90s, 30m, 8h, 7d).`);
  const amount = Number(match[1]);
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(match[2] ?? "ms") as "ms" | "s" | "m" | "h" | "d"];
  const ms = amount * unit;
  if (ms <= 0) throw new InvalidArgumentError("A duration must be positive.");
  return ms;
}
