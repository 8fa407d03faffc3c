import type { Command } from "commander";
import { startThread, type StartOptions } from "../thread-start.js";
import { addStartOptions } from "./thread-new.js";

/**
 * `switchyard run "prompt"`: the one-shot form, like `codex exec`. Starts a thread in the
 * working directory's project, shows its progress on stderr, prints the answer on stdout and
 * exits with the run's outcome. Ctrl-C stops the run; a second Ctrl-C leaves it running.
 */
export function registerRun(program: Command): void {
  addStartOptions(
    program
      .command("run <prompt>")
      .description(
        'Run a prompt ("-" reads stdin) once on the running server and print the answer; exit 0 completed, 4 failed, 5 interrupted, 6 cancelled, 7 still going at --timeout',
      ),
  ).action(async (prompt: string, options: StartOptions) => {
    await startThread(prompt, options, { command: "switchyard run", wait: true, stopOnCtrlC: true });
  });
}
