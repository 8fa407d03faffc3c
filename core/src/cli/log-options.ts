import { Option } from "commander";
import { pathsFor, resolveHome } from "../config/paths.js";
import {
  createLogger,
  LOG_FORMATS,
  LOG_LEVELS,
  type LogFormat,
  type Logger,
  type LogLevel,
} from "../logging/logger.js";
import type { HomeOptions } from "./open-host.js";
import { colorEnabled } from "./output.js";

/** `--log-level` and `--log-format`, as commander parses them. */
export interface LogOptions {
  readonly logLevel?: LogLevel;
  readonly logFormat?: LogFormat;
}

export function logLevelOption(): Option {
  return new Option("--log-level <level>", "lowest level logged (default: $SWITCHYARD_LOG_LEVEL, else info)").choices(
    LOG_LEVELS,
  );
}

export function logFormatOption(): Option {
  return new Option(
    "--log-format <format>",
    "log lines on stderr: pretty or json (default: pretty on a terminal, else json; $SWITCHYARD_LOG_FORMAT)",
  ).choices(LOG_FORMATS);
}

/**
 * The server's logger: pretty or JSON lines on stderr (stdout keeps the banner), and every event
 * as a JSON line in `$SWITCHYARD_HOME/logs/switchyard.log`.
 */
export function serverLogger(options: LogOptions & HomeOptions): Logger {
  return createLogger({
    ...(options.logLevel !== undefined ? { level: options.logLevel } : {}),
    ...(options.logFormat !== undefined ? { format: options.logFormat } : {}),
    color: colorEnabled(process.stderr),
    file: pathsFor(resolveHome(options.home)).logFile,
  });
}
