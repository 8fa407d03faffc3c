// The logger and directories the host hands a plugin, in its driver context (driver.ts) and its
// command context (commands.ts) alike; a file of their own so neither of those imports the other.

/** Structured logger handed to plugins. Secrets are redacted by the host. @public */
export interface PluginLoggerV1 {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** A logger whose lines carry `bindings`. */
  child(bindings: Record<string, unknown>): PluginLoggerV1;
}

/** Directories a plugin may use. @public */
export interface PluginPathsV1 {
  /** `$SWITCHYARD_HOME`. */
  readonly home: string;
  /** A cache directory owned by this plugin (created on demand). */
  readonly cacheDir: string;
  /** A data directory owned by this plugin (created on demand). */
  readonly dataDir: string;
}
