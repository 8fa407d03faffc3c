import { pino, type Logger as PinoLogger } from "pino";
import type { PluginLogger } from "../spec/index.js";

/** Structured logger used everywhere in the host; one JSON event per line on stderr. */
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

export interface LoggerOptions {
  /** Minimum level; default `info`, or SWITCHYARD_LOG_LEVEL. */
  readonly level?: string;
  /** Where lines go; default stderr. */
  readonly destination?: { write(line: string): unknown };
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

/** Creates the host logger: pino, secrets redacted by key and by pattern. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const destination = options.destination ?? process.stderr;
  const paths = REDACTED_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`]);
  const logger = pino(
    {
      level: options.level ?? process.env.SWITCHYARD_LOG_LEVEL ?? "info",
      base: { service: "switchyard" },
      redact: { paths, censor: "[redacted]" },
    },
    { write: (line: string) => destination.write(scrubSecrets(line)) },
  );
  return wrap(logger);
}

/** A logger that drops everything (for CLI one-shots that print their own output). */
export function createSilentLogger(): Logger {
  return createLogger({ level: "silent" });
}
