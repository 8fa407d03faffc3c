import "reflect-metadata";
import { CommanderError, InvalidArgumentError } from "commander";
import { useBuiltinPlugins } from "../plugin-host/builtin-plugins.js";
import { buildProgram } from "./program.js";
import { CliError, endQuietlyWhenPipeCloses, EXIT, reportError } from "./output.js";

/** How a launcher runs the command line (`@switchyard/core/cli`). */
export interface RunCliOptions {
  /**
   * The built-in plugin package folders (the `@switchyard/cli` launcher's dependencies).
   * Omitted: a checkout's `plugins/` folder, when there is one.
   */
  readonly builtinPlugins?: readonly string[];
  /** The words after the command name (default: `process.argv`'s). */
  readonly argv?: readonly string[];
}

/**
 * Runs the `switchyard` command line once and sets `process.exitCode`: 0 ok, 1 failed, 2 bad
 * input or config, 3 not found.
 */
export async function runCli(options: RunCliOptions = {}): Promise<void> {
  if (options.builtinPlugins !== undefined) useBuiltinPlugins(options.builtinPlugins);
  endQuietlyWhenPipeCloses(process.stdout);
  endQuietlyWhenPipeCloses(process.stderr);
  const args = options.argv ?? process.argv.slice(2);
  const program = buildProgram(args);
  try {
    await program.parseAsync([...args], { from: "user" });
  } catch (error) {
    // Commander prints its own parse errors before it throws a CommanderError of its own; an
    // InvalidArgumentError reaching here was thrown by an action (a value checked there, like
    // `audit --since`), so nothing has said why yet.
    if (error instanceof InvalidArgumentError) {
      reportError(new CliError(error.message, EXIT.usage));
      process.exitCode = EXIT.usage;
      return;
    }
    if (error instanceof CommanderError) {
      // Help and version exit 0; usage mistakes exit 2 (commander already printed why).
      process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return;
    }
    process.exitCode = reportError(error);
  }
}
