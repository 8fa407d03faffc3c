import type { PluginLoggerV1, PluginPathsV1 } from "./plugin-services.js";

/**
 * Command-line contributions: a plugin may add command groups to `switchyard`
 * (`switchyard registry search …`). A group is declared in the manifest's `commands` (so the
 * CLI lists it without running plugin code) and defined in the plugin definition's `commands`.
 * The host owns parsing, help, colors and exit codes; a plugin only describes its commands and
 * runs them.
 */

/** A positional argument (`<agentId>`, `[query...]`). @public */
export interface CommandArgumentV1 {
  /** Its key in {@link CommandInvocationV1.args}; `[a-zA-Z][a-zA-Z0-9-]*`. */
  readonly name: string;
  /** What it is, for help. */
  readonly description?: string;
  /** Must be given (default true). A required argument may not follow an optional one. */
  readonly required?: boolean;
  /** Takes every remaining word; its value is then a string array. Only the last argument may. */
  readonly variadic?: boolean;
}

/** An option: a flag (`--all`) or, with `valueName`, an option taking a value (`--limit <n>`). @public */
export interface CommandOptionV1 {
  /**
   * The long name without dashes and its key in {@link CommandInvocationV1.options}: lowercase
   * `[a-z][a-z0-9-]*` (`registry-url`). `home` and `help` belong to the host.
   */
  readonly name: string;
  /** What it does, for help. */
  readonly description: string;
  /** The placeholder of its value (`url` → `--registry-url <url>`); omit for a flag. */
  readonly valueName?: string;
}

/** What a command was run with, keyed by the declared names. @public */
export interface CommandInvocationV1 {
  /** Positional arguments: a string, a string array for a variadic one, undefined when omitted. */
  readonly args: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** Options: `true` for a given flag, the string for a given option, undefined when omitted. */
  readonly options: Readonly<Record<string, string | boolean | undefined>>;
}

/** A provider instance in the config whose driver this plugin provides. @public */
export interface ConfiguredInstanceV1 {
  /** The instance id (`gemini`). */
  readonly id: string;
  /** Its driver kind. */
  readonly driver: string;
  /** Whether it is enabled. */
  readonly enabled: boolean;
  /** Its driver options as the config file has them (not validated by the driver's schema). */
  readonly options: Readonly<Record<string, unknown>>;
}

/** The style names {@link CommandOutputV1.style} knows. @public */
export type CommandStyleV1 = "red" | "green" | "yellow" | "dim" | "bold";

/**
 * How a command writes. The host applies its own rules (colors only on a terminal, never with
 * `NO_COLOR`; `warning:` and `error:` prefixes on stderr), so every command looks alike.
 * @public
 */
export interface CommandOutputV1 {
  /** Writes text to stdout as is. */
  write(text: string): void;
  /** Writes a value as pretty JSON and a newline to stdout (for `--json`). */
  json(value: unknown): void;
  /** Writes an aligned table with a bold header to stdout. */
  table(headers: readonly string[], rows: readonly (readonly string[])[]): void;
  /** Writes `warning: <message>` to stderr. */
  warn(message: string): void;
  /** Writes `error: <message>` to stderr; the command then returns a non-zero exit code. */
  error(message: string): void;
  /** `text` in the given style when stdout shows colors, else `text`. */
  style(text: string, name: CommandStyleV1): string;
  /** stderr, for progress drawn in place; draw only when `isTTY`. */
  readonly stderr: { write(text: string): unknown; readonly isTTY: boolean };
}

/** What a contributed command gets from the host. @public */
export interface CommandContextV1 {
  /** The host's spec semver (`1.0.0`). */
  readonly specVersion: string;
  /** The Switchyard version. */
  readonly hostVersion: string;
  /**
   * The home the command runs on (`--home`, else `$SWITCHYARD_HOME`, else `~/.switchyard`), the
   * plugin's own folders in it (created on first use) and its config file.
   */
  readonly paths: PluginPathsV1 & { readonly configFile: string };
  /** Logger bound to the plugin and command (silent unless `SWITCHYARD_LOG_LEVEL` is set). */
  readonly logger: PluginLoggerV1;
  /**
   * The configured instances whose driver this plugin provides, read from the config file when
   * called. Throws a `config_invalid` error naming the file and field when the config is
   * malformed, so a command that can work without it may catch that and go on.
   */
  instances(): readonly ConfiguredInstanceV1[];
  /** Output helpers. */
  readonly output: CommandOutputV1;
}

/** Exit codes every `switchyard` command shares; a command's `run` returns one of them. @public */
export const COMMAND_EXIT_CODES = {
  /** Done. */
  ok: 0,
  /** The operation failed. */
  failed: 1,
  /** Bad input: an argument, an option, the config. */
  usage: 2,
  /** The thing the command names does not exist. */
  notFound: 3,
} as const;

/** One command of a group (`search` in `switchyard registry search`). @public */
export interface CommandV1 {
  /** Lowercase `[a-z][a-z0-9-]*`, unique in its group. */
  readonly name: string;
  /** One line for help. */
  readonly description: string;
  /** Positional arguments, in order. */
  readonly arguments?: readonly CommandArgumentV1[];
  /** Options. Every command also gets `--home <dir>` from the host. */
  readonly options?: readonly CommandOptionV1[];
  /**
   * Runs the command and returns its exit code ({@link COMMAND_EXIT_CODES}; nothing means 0).
   * A thrown error is reported as `error: <message>`; a Switchyard error's `code` picks the exit
   * code (`invalid_input`, `config_invalid` → 2, `not_found` → 3, else 1).
   */
  run(invocation: CommandInvocationV1, context: CommandContextV1): number | void | Promise<number | void>;
}

/**
 * A command group: `switchyard <name> <command> …`. Its name must be listed in the manifest's
 * `commands`, and may not be one of the host's own commands.
 * @public
 */
export interface CommandGroupV1 {
  /** Lowercase `[a-z][a-z0-9-]*` (`registry`). */
  readonly name: string;
  /** One line for `switchyard --help`. */
  readonly description: string;
  /** Its commands; at least one. */
  readonly commands: readonly CommandV1[];
}
