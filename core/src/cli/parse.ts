import { InvalidArgumentError } from "commander";

/** Parses a TCP port (0 = any free port). */
export function parsePort(value: string): number {
  // Digits only: Number("") and Number(" ") are 0, which would quietly pick a random port.
  const port = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new InvalidArgumentError(`"${value}" is not a port (0-65535; 0 picks a free one).`);
  return port;
}
