import { openSync, renameSync, statSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { pino, type Logger as PinoLogger } from "pino";
import { SwitchyardError, type PluginLogger } from "../spec/index.js";
import { prettyLogLine } from "./pretty-line.js";
import { makePrivateDir } from "../util/private-files.js";
import { token } from "../util/di-token.js";

/** Structured logger used everywhere in the host; one event per line. */
export type Logger = PluginLogger;

/**
 * Bearer tokens Switchyard issues start with this prefix, so the logger can scrub them from
 * any line, whatever field (or free text) they ended up in.
 */
export const TOKEN_PREFIX = "sy_";
const TOKEN_PATTERN = /sy_[A-Za-z0-9_-]{16,}/g;
const BEARER_PATTERN = /(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi;

/** Field names whose values are always secrets. */
const REDACTED_KEYS = ["token", "authorization", "apiKey", "api_key", "password", "secret", "bearerToken"];

/** Removes anything that looks like a credential from a log line. */
export function scrubSecrets(line: string): string {
  return line.replace(TOKEN_PATTERN, `${TOKEN_PREFIX}[redacted]`).replace(BEARER_PATTERN, "$1[redacted]");
}

/** The levels `--log-level` and SWITCHYARD_LOG_LEVEL take (pino's, plus `silent`). */
export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** `pretty`: one readable line per event, for a person at a terminal; `json`: pino's JSON lines. */
export const LOG_FORMATS = ["pretty", "json"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** A log file that grew past this is moved to `<file>.1` when the next logger opens it. */
const LOG_FILE_ROTATE_BYTES = 10 * 1024 * 1024;

export interface LoggerOptions {
  /** Minimum level; default SWITCHYARD_LOG_LEVEL, else `info`. */
  readonly level?: string;
  /** Where terminal lines go; default stderr. */
  readonly destination?: { write(line: string): unknown; readonly isTTY?: boolean };
  /**
   * How terminal lines look; default SWITCHYARD_LOG_FORMAT, else `pretty` when the destination
   * is a terminal and `json` otherwise.
   */
  readonly format?: LogFormat;
  /** Colors in pretty lines; default off (callers decide, honouring NO_COLOR). */
  readonly color?: boolean;
  /** Also append every event to this file as a JSON line (the folder is created). */
  readonly file?: string;
}

function wrap(logger: PinoLogger): Logger {
  return {
    debug: (message, fields) => logger.debug(fields ?? {}, message),
    info: (message, fields) => logger.info(fields ?? {}, message),
    warn: (message, fields) => logger.warn(fields ?? {}, message),
    error: (message, fields) => logger.error(fields ?? {}, message),
    child: (bindings) => wrap(logger.child(bindings)),
  };
}

function checkedLevel(level: string, source: string): LogLevel {
  if ((LOG_LEVELS as readonly string[]).includes(level)) return level as LogLevel;
  throw new SwitchyardError(
    "invalid_input",
    `${source} "${level}" is not a log level; use one of ${LOG_LEVELS.join(", ")}.`,
    { level },
  );
}

function checkedFormat(format: string, source: string): LogFormat {
  if ((LOG_FORMATS as readonly string[]).includes(format)) return format as LogFormat;
  throw new SwitchyardError("invalid_input", `${source} "${format}" is not a log format; use pretty or json.`, {
    format,
  });
}

function defaultFormat(destination: { readonly isTTY?: boolean }): LogFormat {
  const fromEnv = process.env.SWITCHYARD_LOG_FORMAT;
  if (fromEnv) return checkedFormat(fromEnv, "SWITCHYARD_LOG_FORMAT");
  return destination.isTTY === true ? "pretty" : "json";
}

/** Opens a log file for appending, moving a large one aside first. */
function openLogFile(file: string): number {
  try {
    makePrivateDir(dirname(file));
    try {
      if (statSync(file).size > LOG_FILE_ROTATE_BYTES) renameSync(file, `${file}.1`);
    } catch {
      // no file yet
    }
    return openSync(file, "a", 0o600);
  } catch (error) {
    throw new SwitchyardError(
      "invalid_input",
      `Cannot write the log file ${file}: ${(error as Error).message}. Check the home's permissions, or point --home elsewhere.`,
      { file },
    );
  }
}

/**
 * Creates the host logger: pino, secrets redacted by key and by pattern before a line goes
 * anywhere; pretty or JSON lines on the destination, JSON lines in the file.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const destination = options.destination ?? process.stderr;
  const level =
    options.level !== undefined
      ? checkedLevel(options.level, "Log level")
      : checkedLevel(process.env.SWITCHYARD_LOG_LEVEL || "info", "SWITCHYARD_LOG_LEVEL");
  const format = level === "silent" ? "json" : (options.format ?? defaultFormat(destination));
  const color = options.color === true;
  const fd = options.file !== undefined && level !== "silent" ? openLogFile(options.file) : null;
  const paths = REDACTED_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`]);
  const logger = pino(
    {
      level,
      base: { service: "switchyard" },
      redact: { paths, censor: "[redacted]" },
    },
    {
      write: (line: string) => {
        const clean = scrubSecrets(line);
        destination.write(format === "pretty" ? prettyLogLine(clean, color) : clean);
        if (fd !== null) {
          try {
            writeSync(fd, clean);
          } catch {
            // A full disk must not take the server down; the terminal still has the line.
          }
        }
      },
    },
  );
  return wrap(logger);
}

/** A logger that drops everything (for CLI one-shots that print their own output). */
export function createSilentLogger(): Logger {
  return createLogger({ level: "silent" });
}

/** DI token: the host's logger. */
export const LoggerToken = token<Logger>("Logger");
