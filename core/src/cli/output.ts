import { hasErrorCode } from "../spec/index.js";
import { isOrchestratorFailure } from "../engine/orchestrator-failure.js";

/** Colors only on a terminal, never with NO_COLOR (https://no-color.org), always with FORCE_COLOR. */
export function colorEnabled(stream: NodeJS.WriteStream = process.stdout): boolean {
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "") return false;
  const force = process.env.FORCE_COLOR;
  if (force !== undefined && force !== "" && force !== "0") return true;
  return stream.isTTY === true;
}

const CODES = { red: 31, green: 32, yellow: 33, dim: 2, bold: 1 } as const;

/** Wraps text in an ANSI style when colors are enabled. */
export function style(text: string, name: keyof typeof CODES, stream: NodeJS.WriteStream = process.stdout): string {
  return colorEnabled(stream) ? `\u001b[${CODES[name]}m${text}\u001b[0m` : text;
}

/** Prints a value as pretty JSON (for --json). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Prints rows as an aligned table with a header. */
export function printTable(headers: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: readonly string[]) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ");
  process.stdout.write(`${style(line(headers), "bold")}\n`);
  for (const row of rows) process.stdout.write(`${line(row)}\n`);
}

/** Exit codes: 1 for a failed operation, 2 for bad input or a bad config file. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** Thrown by commands to end with a message and an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
  ) {
    super(message);
  }
}

/** Prints an error the way a person can act on it, and returns the exit code. */
export function reportError(error: unknown): number {
  let message: string;
  let code: number = EXIT.failed;
  if (error instanceof CliError) {
    message = error.message;
    code = error.exitCode;
  } else if (isOrchestratorFailure(error)) {
    message = `${error.code}: ${error.message}`;
    code = error.code === "invalid_request" ? EXIT.usage : EXIT.failed;
  } else if (hasErrorCode(error)) {
    message = error.message;
    code = error.code === "config_invalid" || error.code === "invalid_input" ? EXIT.usage : EXIT.failed;
  } else {
    message = error instanceof Error ? error.message : String(error);
  }
  process.stderr.write(`${style("error:", "red", process.stderr)} ${message}\n`);
  return code;
}
