import type { Command } from "commander";
import { INTERACTION_MODES, RUNTIME_MODES } from "../../spec/index.js";
import { parseDuration } from "../duration.js";
import { DEFAULT_CLI_RUNTIME_MODE, startThread, type StartOptions } from "../thread-start.js";
import { parseInteractionMode, parseRuntimeMode } from "./token.js";
import { CliError, EXIT } from "../output.js";

/** `--workspace`: a strategy a new thread can get from the CLI (`existing` needs a path: use the API). */
function parseWorkspace(value: string): "shared" | "worktree" | "scratch" {
  if (value === "shared" || value === "worktree" || value === "scratch") return value;
  throw new CliError(`--workspace "${value}" is not one of shared, worktree, scratch.`, EXIT.usage);
}

/** The options `threads new` and `run` share: where the work runs, on what, in which modes. */
export function addStartOptions(command: Command): Command {
  return command
    .option("--project <dir|id>", "the project's folder or id (default: the project holding the working directory)")
    .option(
      "--provider <id>",
      "the provider instance (`switchyard providers` lists them; default: the first that can run work, in the config's order)",
    )
    .option("--model <model>", "a model the provider advertises (default: the provider's first)")
    .option("--effort <effort>", "a reasoning effort the model lists")
    .option(
      "--mode <mode>",
      `runtime mode: ${RUNTIME_MODES.join(", ")} (default ${DEFAULT_CLI_RUNTIME_MODE}: it asks before commands and edits)`,
      parseRuntimeMode,
    )
    .option(
      "--interaction-mode <mode>",
      `${INTERACTION_MODES.join(" or ")} (plan: it proposes, does not act)`,
      parseInteractionMode,
    )
    .option("--title <title>", "the thread's title (default: derived from the prompt)")
    .option(
      "--profile <name>",
      "a profile (`switchyard profiles list`): its provider, model, instructions and mode ceiling; --provider, --model, --mode may narrow it, never widen it",
    )
    .option(
      "--timeout <duration>",
      "stop following after this long, e.g. 30s, 10m (the run goes on; exit 7)",
      parseDuration,
    )
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON");
}

export function registerThreadNew(threads: Command): void {
  addStartOptions(
    threads
      .command("new <prompt>")
      .description(
        'Start a thread with a prompt ("-" reads it from stdin) in a project; prints its id, or with --wait follows it to its answer',
      ),
  )
    .option(
      "--workspace <strategy>",
      "where it works: shared (the project's folder; the default unless the project sets another), worktree (a new git worktree on a new branch), scratch (an empty folder)",
      parseWorkspace,
    )
    .option(
      "--base <ref>",
      "with --workspace worktree: the branch or commit to start from (default the project folder's current commit)",
    )
    .option(
      "--wait",
      "follow the run: its progress on stderr, its answer on stdout; exit with its outcome (0 completed, 4 failed, 5 interrupted, 6 cancelled, 7 still going); Ctrl-C stops following, the run goes on",
    )
    .action(async (prompt: string, options: StartOptions & { wait?: boolean }) => {
      await startThread(prompt, options, {
        command: "switchyard threads new",
        wait: options.wait === true,
        stopOnCtrlC: false,
      });
    });
}
