import { InvalidArgumentError } from "commander";

/** Parses a TCP port (0 = any free port). */
export function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError(`"${value}" is not a port (0-65535).`);
  return port;
}
