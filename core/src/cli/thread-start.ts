import { randomUUID } from "node:crypto";
import { text } from "node:stream/consumers";
import type { InteractionMode, RuntimeMode } from "../spec/index.js";
import { CliError, EXIT, exitCodeForRun, printJson, style } from "./output.js";
import { followRun, type FinishedRun } from "./run-follower.js";
import { RunProgress } from "./run-progress.js";
import { ServerEventFeed } from "./server-events.js";
import { withServer, type ServerApi } from "./server-api.js";
import { projectIdOf } from "./thread-arguments.js";

/** The runtime mode of work the CLI starts when `--mode` is not given: the one that asks first. */
export const DEFAULT_CLI_RUNTIME_MODE: RuntimeMode = "approval-required";

/** What `threads new` and `run` take. */
export interface StartOptions {
  readonly project?: string;
  readonly provider?: string;
  readonly model?: string;
  readonly effort?: string;
  readonly mode?: RuntimeMode;
  readonly interactionMode?: InteractionMode;
  readonly title?: string;
  /** The profile the thread runs with (`switchyard profiles list`): explicit options narrow it. */
  readonly profile?: string;
  /** Where the thread works (`threads new --workspace`, with `--base` for a worktree). */
  readonly workspace?: "shared" | "worktree" | "scratch";
  readonly base?: string;
  readonly timeout?: number;
  readonly home?: string;
  readonly json?: boolean;
}

/** How a command starts work: whether it follows the run, and what Ctrl-C means while it does. */
export interface StartBehaviour {
  /** `switchyard run` or `switchyard threads new`. */
  readonly command: string;
  readonly wait: boolean;
  /** Ctrl-C stops the run (`run`, one-shot), instead of only leaving it (`threads new --wait`). */
  readonly stopOnCtrlC: boolean;
}

interface ThreadShell {
  threadId: string;
  link: string;
  title: string;
  providerInstanceId: string;
  model: string | null;
  runtimeMode: string;
  interactionMode: string;
  profile?: { name: string } | null;
}

/** What GET /profiles says of a profile's target. */
interface ProfileList {
  profiles: { name: string; target?: { providerInstanceId?: string; driverKind?: string } }[];
}

interface Created {
  threads: { runId: string | null; notes: string[]; thread: ThreadShell }[];
}

/** The events a follower needs (the feed is the project's: the thread's id is not known yet). */
const FOLLOWED_EVENT_TYPES = ["run.finished", "message", "item", "request.opened", "task.updated"] as const;

/** The prompt argument: the text itself, or `-` for standard input. */
export async function promptText(value: string): Promise<string> {
  const prompt = value === "-" ? await text(process.stdin) : value;
  if (prompt.trim() === "")
    throw new CliError(
      value === "-"
        ? "Standard input held no prompt; say what the thread should do."
        : "The prompt is empty; say what the thread should do.",
      EXIT.usage,
    );
  return prompt;
}

interface ProviderSnapshot {
  providers: { providerInstanceId: string; canRunChildTasks: boolean; constraints: string[] }[];
}

/** Without --provider: the first configured instance that can run work now (the config's order). */
/** Whether the project's profile of that name picks its own provider (an unknown one is the server's to refuse). */
async function profileNamesProvider(api: ServerApi, projectId: string, name: string): Promise<boolean> {
  const { profiles } = await api.call<ProfileList>("GET", `/profiles?projectId=${encodeURIComponent(projectId)}`);
  const target = profiles.find((profile) => profile.name === name)?.target;
  return target?.providerInstanceId !== undefined || target?.driverKind !== undefined;
}

async function defaultProvider(api: ServerApi): Promise<string> {
  const { providers } = await api.call<ProviderSnapshot>("GET", "/providers");
  const ready = providers.find((provider) => provider.canRunChildTasks);
  if (ready !== undefined) return ready.providerInstanceId;
  if (providers.length === 0)
    throw new CliError(
      'The server has no provider instances configured: add one to the home\'s config.json ("providers": [...]); `switchyard doctor` checks them.',
      EXIT.failed,
    );
  const why = providers
    .map((provider) => `  ${provider.providerInstanceId}: ${provider.constraints.join("; ") || "unavailable"}`)
    .join("\n");
  throw new CliError(
    `No provider instance can run work now:\n${why}\n\`switchyard doctor\` says what to do; or pass --provider <id>.`,
    EXIT.failed,
  );
}

function describe(thread: ThreadShell): string {
  const provider = thread.model !== null ? `${thread.providerInstanceId}/${thread.model}` : thread.providerInstanceId;
  return `${style(thread.title || "Untitled", "bold", process.stderr)} (${thread.threadId}) on ${provider}, ${thread.runtimeMode}${thread.interactionMode === "plan" ? ", plan mode" : ""}${thread.profile ? `, profile ${thread.profile.name}` : ""}\n  ${thread.link}`;
}

/**
 * Ctrl-C while a run is followed. With `stopOnCtrlC` the first press stops the run (and the
 * follower waits for it to end), a second leaves it; otherwise the first press leaves it. The
 * returned signal aborts when the command should stop following.
 */
function onCtrlC(
  api: ServerApi,
  threadId: string,
  stopOnCtrlC: boolean,
): { signal: AbortSignal; leftByPerson: () => boolean; dispose: () => void } {
  const leave = new AbortController();
  let presses = 0;
  const handler = () => {
    presses += 1;
    if (stopOnCtrlC && presses === 1) {
      process.stderr.write(style("Stopping the run (Ctrl-C again leaves it running)…\n", "yellow", process.stderr));
      api
        .call("POST", `/threads/${encodeURIComponent(threadId)}/stop`, { reason: "stopped_from_cli" })
        .catch((error: Error) => {
          process.stderr.write(`${style("error:", "red", process.stderr)} ${error.message}\n`);
          leave.abort();
        });
      return;
    }
    leave.abort();
  };
  process.on("SIGINT", handler);
  return {
    signal: leave.signal,
    leftByPerson: () => leave.signal.aborted,
    dispose: () => process.off("SIGINT", handler),
  };
}

function printOutcome(run: FinishedRun, thread: ThreadShell, json: boolean | undefined): void {
  if (json) {
    printJson({
      thread,
      runId: run.runId,
      status: run.status,
      summary: run.summary,
      error: run.error,
      terminalReason: run.terminalReason,
    });
    return;
  }
  if (run.status !== "completed") {
    const why = run.error?.message ?? run.terminalReason ?? "";
    process.stderr.write(
      `${style(run.status, run.status === "failed" ? "red" : "yellow", process.stderr)}${why !== "" ? `: ${why}` : ""}\n`,
    );
  }
  if (run.summary !== null && run.summary !== "") process.stdout.write(`${run.summary}\n`);
}

/**
 * Creates a thread with a prompt through the running server's API, in the project the options
 * (or the working directory) name, and, when asked, follows its run to the end: progress on
 * stderr, the answer on stdout, the exit code the run's outcome (see EXIT).
 */
export async function startThread(
  promptArgument: string,
  options: StartOptions,
  behaviour: StartBehaviour,
): Promise<void> {
  const prompt = await promptText(promptArgument);
  await withServer(
    options,
    { verbs: ["orchestration:read", "orchestration:operate"], command: behaviour.command, follows: behaviour.wait },
    async (api, host) => {
      const projectId = await projectIdOf(host, options.project);
      // Opened before the thread exists, so none of its events can be missed.
      const feed = behaviour.wait ? await ServerEventFeed.open(api, { projectId, types: FOLLOWED_EVENT_TYPES }) : null;
      try {
        // A profile that names its provider chooses it; else the first that can run work.
        const profileChoosesProvider =
          options.profile !== undefined && (await profileNamesProvider(api, projectId, options.profile));
        const providerInstanceId =
          options.provider ?? (profileChoosesProvider ? undefined : await defaultProvider(api));
        const target = {
          ...(providerInstanceId !== undefined ? { providerInstanceId } : {}),
          ...(options.model !== undefined ? { model: options.model } : {}),
          ...(options.effort !== undefined ? { effort: options.effort } : {}),
        };
        const created = await api.call<Created>("POST", "/threads", {
          projectId,
          clientRequestId: `cli-${randomUUID()}`,
          threads: [
            {
              prompt,
              ...(options.title !== undefined ? { title: options.title } : {}),
              ...(options.profile !== undefined ? { profile: options.profile } : {}),
              target,
              runtimeMode: options.mode ?? DEFAULT_CLI_RUNTIME_MODE,
              ...(options.interactionMode !== undefined ? { interactionMode: options.interactionMode } : {}),
              ...(options.workspace !== undefined || options.base !== undefined
                ? {
                    workspace: {
                      strategy: options.workspace ?? "worktree",
                      ...(options.base !== undefined ? { baseRef: options.base } : {}),
                    },
                  }
                : {}),
            },
          ],
        });
        const entry = created.threads[0]!;
        const { thread } = entry;
        if (feed === null || entry.runId === null) {
          if (options.json) printJson({ thread, runId: entry.runId, notes: entry.notes });
          else {
            process.stdout.write(`${thread.threadId}\n`);
            process.stderr.write(
              `${describe(thread)}\n${entry.notes.map((note) => `  note: ${note}\n`).join("")}Follow it with: switchyard threads wait ${thread.threadId}${entry.runId !== null ? ` --run ${entry.runId}` : ""}\n`,
            );
          }
          return;
        }
        if (!options.json)
          process.stderr.write(`${describe(thread)}\n${entry.notes.map((note) => `  note: ${note}\n`).join("")}`);
        const ctrlC = onCtrlC(api, thread.threadId, behaviour.stopOnCtrlC);
        const timeout = options.timeout !== undefined ? AbortSignal.timeout(options.timeout) : null;
        try {
          const run = await followRun(feed, {
            threadId: thread.threadId,
            runId: entry.runId,
            progress: new RunProgress(thread.threadId, prompt, options.json === true),
            signal: timeout === null ? ctrlC.signal : AbortSignal.any([ctrlC.signal, timeout]),
          });
          if (run === null) {
            const why = ctrlC.leftByPerson()
              ? "Left it running"
              : `Still running after ${Math.round(options.timeout! / 1000)}s`;
            process.stderr.write(
              `${why}: switchyard threads wait ${thread.threadId} --run ${entry.runId} (or stop it: switchyard threads stop ${thread.threadId})\n`,
            );
            if (options.json)
              printJson({
                thread,
                runId: entry.runId,
                status: "running",
                summary: null,
                error: null,
                terminalReason: null,
              });
            process.exitCode = ctrlC.leftByPerson() ? 130 : EXIT.runStillGoing;
            return;
          }
          printOutcome(run, thread, options.json);
          process.exitCode = exitCodeForRun(run.status);
        } finally {
          ctrlC.dispose();
        }
      } finally {
        await feed?.close();
      }
    },
  );
}
