import { hasErrorCode } from "../spec/index.js";
import { isOrchestratorFailure } from "../engine/orchestrator-failure.js";
import { isStoreBusy } from "../util/store-busy.js";

/** Colors only on a terminal, never with NO_COLOR (https://no-color.org), always with FORCE_COLOR. */
export function colorEnabled(stream: NodeJS.WriteStream = process.stdout): boolean {
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "") return false;
  const force = process.env.FORCE_COLOR;
  if (force !== undefined && force !== "" && force !== "0") return true;
  return stream.isTTY === true;
}

const CODES = { red: 31, green: 32, yellow: 33, dim: 2, bold: 1 } as const;

/** The name of an ANSI style {@link style} knows. */
export type StyleName = keyof typeof CODES;

/** Wraps text in an ANSI style when colors are enabled. */
export function style(text: string, name: StyleName, stream: NodeJS.WriteStream = process.stdout): string {
  return colorEnabled(stream) ? `\u001b[${CODES[name]}m${text}\u001b[0m` : text;
}

// SGR sequences, the only escapes `style` writes.
const ANSI_SGR = /\u001b\[[0-9;]*m/g;

/** The number of columns a string takes on a terminal: its length without color escapes. */
export function visibleWidth(text: string): number {
  return text.replace(ANSI_SGR, "").length;
}

/** Pads a possibly colored string with spaces to `width` visible columns. */
export function padVisible(text: string, width: number): string {
  return text + " ".repeat(Math.max(0, width - visibleWidth(text)));
}

/** Prints a value as pretty JSON (for --json). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Prints rows as an aligned table with a header; colored cells are measured without their escapes. */
export function printTable(headers: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = headers.map((header, i) =>
    Math.max(visibleWidth(header), ...rows.map((row) => visibleWidth(row[i] ?? ""))),
  );
  const line = (cells: readonly string[]) =>
    cells.map((cell, i) => (i === cells.length - 1 ? cell : padVisible(cell, widths[i]!))).join("  ");
  process.stdout.write(`${style(line(headers), "bold")}\n`);
  for (const row of rows) process.stdout.write(`${line(row)}\n`);
}

/**
 * Exit codes: 1 for a failed operation, 2 for bad input or a bad config file, 3 when the thing
 * a command names (a token, plugin, project, registry agent) does not exist. Commands that wait
 * for a run (`run`, `threads new --wait`, `threads wait`) end with the run's outcome: 0
 * completed, 4 failed, 5 interrupted (stopped), 6 cancelled, 7 still going when the wait gave up.
 */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  notFound: 3,
  runFailed: 4,
  runInterrupted: 5,
  runCancelled: 6,
  runStillGoing: 7,
} as const;

/** The exit code a waiting command ends with for its run's status. */
export function exitCodeForRun(status: string): number {
  switch (status) {
    case "completed":
      return EXIT.ok;
    case "failed":
      return EXIT.runFailed;
    case "interrupted":
      return EXIT.runInterrupted;
    case "cancelled":
      return EXIT.runCancelled;
    default:
      return EXIT.runStillGoing;
  }
}

/** Thrown by commands to end with a message and an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
  ) {
    super(message);
  }
}

/** The exit code for a typed error's `code`. */
export function exitCodeFor(code: string): number {
  if (code === "not_found" || code.endsWith("_not_found")) return EXIT.notFound;
  if (code === "config_invalid" || code === "invalid_input" || code === "invalid_request") return EXIT.usage;
  return EXIT.failed;
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
    code = exitCodeFor(error.code);
  } else if (hasErrorCode(error)) {
    message = error.message;
    code = exitCodeFor(error.code);
  } else if (isStoreBusy(error)) {
    // SQLite's own SQLITE_BUSY, from a statement outside the store's transactions.
    message =
      "Switchyard's database (switchyard.db in the home) stayed locked by another connection, so nothing was written; retry. If it keeps happening, a program holds a write transaction open on it (a sqlite3 shell, a backup tool): end it.";
  } else {
    message = error instanceof Error ? error.message : String(error);
  }
  process.stderr.write(`${style("error:", "red", process.stderr)} ${message}\n`);
  return code;
}

/**
 * A reader that stops reading (`switchyard token list | head -1`) closes the pipe; writing more
 * is not a failure of the command, so end quietly with 0 instead of an EPIPE stack trace.
 */
export function endQuietlyWhenPipeCloses(stream: NodeJS.WriteStream): void {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(EXIT.ok);
    throw error;
  });
}
