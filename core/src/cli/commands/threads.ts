import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { parseDuration } from "../duration.js";
import { CliError, EXIT, exitCodeForRun, printJson, printTable, style } from "../output.js";
import { withServer, type CommandAccess } from "../server-api.js";
import { projectIdOf, threadIdOf } from "../thread-arguments.js";
import { registerThreadControl } from "./thread-control.js";
import { registerThreadChanges } from "./thread-changes.js";
import { registerThreadNew } from "./thread-new.js";
import { registerThreadSearch } from "./thread-search.js";
import { registerThreadSnooze } from "./thread-snooze.js";

const READ: CommandAccess = { verbs: ["orchestration:read"], command: "switchyard threads" };
const OPERATE: CommandAccess = {
  verbs: ["orchestration:read", "orchestration:operate"],
  command: "switchyard threads",
};
/** How long `threads wait` waits in all (each request is capped by the server's maxWaitMs). */
const DEFAULT_WAIT_MS = 10 * 60_000;

const SEND_MODES = ["auto", "queue", "steer", "restart"] as const;
type SendMode = (typeof SEND_MODES)[number];

function parseSendMode(value: string): SendMode {
  if ((SEND_MODES as readonly string[]).includes(value)) return value as SendMode;
  throw new InvalidArgumentError(`"${value}" is not a send mode; use ${SEND_MODES.join(", ")}.`);
}

interface WaitResult {
  runId: string | null;
  status: string;
  summary: string | null;
  error: { message: string } | null;
  waitTimedOut: boolean;
  endedBy: string;
  attention: { kind: string; requestId: string } | null;
  cursor: string;
}

interface ThreadShell {
  threadId: string;
  title: string;
  projectId: string;
  providerInstanceId: string;
  model: string | null;
  status: string;
  queuedRuns: number;
  relationship: string;
  updatedAt?: string;
}

function statusText(status: string): string {
  const color =
    status === "completed"
      ? "green"
      : status === "failed"
        ? "red"
        : status === "running" || status === "waiting" || status === "queued"
          ? "yellow"
          : "dim";
  return style(status, color);
}

export function registerThreads(program: Command): void {
  const threads = program
    .command("threads")
    .description(
      "Threads for a person at a terminal: start, list, search, read, send, wait, stop, interrupt, approve, snooze (talks to the running server; a thread is its id, its switchyard-thread:// link or its web UI URL)",
    );
  registerThreadNew(threads);

  threads
    .command("list")
    .description("Threads of every project (or --project), newest first")
    .option("--project <dir|id>", "only this project's threads (its folder or id)")
    .option(
      "--status <status>",
      "only threads whose latest run has this status (idle, queued, running, waiting, completed, failed, cancelled, interrupted)",
    )
    .option("--subagents", "include delegated child threads")
    .option("--limit <n>", "at most this many per project (default 50)", (value) => {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1 || n > 100)
        throw new InvalidArgumentError("--limit takes a whole number from 1 to 100.");
      return n;
    })
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(listThreads);

  threads
    .command("read <thread>")
    .description("A thread's state and its recent messages")
    .option("--max-chars <n>", "at most this many characters of timeline (default 30000)", (value) => {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("--max-chars takes a positive whole number.");
      return n;
    })
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(readThread);

  threads
    .command("send <thread> <message>")
    .description("Send a message to a thread: it starts a turn, queues, or steers the running one (--mode)")
    .option(
      "--mode <mode>",
      `auto (default: start, or steer a running turn the way the provider can), ${SEND_MODES.slice(1).join(", ")}`,
      parseSendMode,
    )
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(sendToThread);

  threads
    .command("wait <thread>")
    .description(
      "Wait until a run of the thread ends (the latest without --run) and print its summary; the exit code is the run's outcome (0 completed, 4 failed, 5 interrupted, 6 cancelled, 7 still going)",
    )
    .option("--run <runId>", "the run to wait for")
    .option(
      "--timeout <duration>",
      "give up after this long, e.g. 30s, 10m (default 10m); the run goes on",
      parseDuration,
    )
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(waitForThread);

  registerThreadSearch(threads);
  registerThreadControl(threads);
  registerThreadSnooze(threads);
  registerThreadChanges(threads);
}

/** `switchyard threads list`: threads of every project (or one), newest first. */
async function listThreads(options: {
  project?: string;
  status?: string;
  subagents?: boolean;
  limit?: number;
  home?: string;
  json?: boolean;
}): Promise<void> {
  await withServer(options, READ, async (api, host) => {
    const projectIds =
      options.project !== undefined
        ? [await projectIdOf(host, options.project)]
        : (await api.call<{ projects: { projectId: string }[] }>("GET", "/projects")).projects.map((p) => p.projectId);
    const all: ThreadShell[] = [];
    for (const projectId of projectIds) {
      const query = new URLSearchParams({ projectId, limit: String(options.limit ?? 50) });
      if (options.status) query.set("runStatus", options.status);
      if (options.subagents) query.set("includeSubagents", "true");
      all.push(...(await api.call<{ threads: ThreadShell[] }>("GET", `/threads?${query.toString()}`)).threads);
    }
    if (options.json) {
      printJson(all);
      return;
    }
    if (all.length === 0) {
      process.stdout.write(
        projectIds.length === 0 ? "No projects yet. Add one with: switchyard project add <folder>\n" : "No threads.\n",
      );
      return;
    }
    printTable(
      ["THREAD", "TITLE", "PROVIDER", "STATUS", "QUEUED", "KIND"],
      all.map((t) => [
        t.threadId,
        t.title.length > 48 ? `${t.title.slice(0, 47)}…` : t.title,
        t.model ? `${t.providerInstanceId}/${t.model}` : t.providerInstanceId,
        statusText(t.status),
        String(t.queuedRuns),
        t.relationship,
      ]),
    );
  });
}

/** `switchyard threads read <thread>`: a thread's state and recent messages. */
async function readThread(
  thread: string,
  options: { maxChars?: number; home?: string; json?: boolean },
): Promise<void> {
  await withServer(options, READ, async (api, host) => {
    const threadId = threadIdOf(host, thread);
    const query = options.maxChars !== undefined ? `?maxChars=${options.maxChars}` : "";
    const read = await api.call<{
      thread: ThreadShell;
      items: { kind: string; role: string | null; text: string; status: string; createdAt: string }[];
      hasMore: boolean;
    }>("GET", `/threads/${encodeURIComponent(threadId)}${query}`);
    if (options.json) {
      printJson(read);
      return;
    }
    const t = read.thread;
    const lines = [
      `${style(t.title, "bold")} (${t.threadId})`,
      `  ${t.providerInstanceId}${t.model ? `/${t.model}` : ""}, ${statusText(t.status)}${t.queuedRuns > 0 ? `, ${t.queuedRuns} queued` : ""}`,
      "",
    ];
    for (const item of read.items) {
      const who = item.role ?? item.kind;
      lines.push(`${style(`[${who}]`, item.role === "user" ? "bold" : "dim")} ${item.text}`);
    }
    if (read.hasMore) lines.push(style("(more: --json shows the paging positions)", "dim"));
    process.stdout.write(`${lines.join("\n")}\n`);
  });
}

/** `switchyard threads send <thread> <message>`. */
async function sendToThread(
  thread: string,
  message: string,
  options: { mode?: SendMode; home?: string; json?: boolean },
): Promise<void> {
  if (message.trim() === "") throw new CliError("The message is empty; say what the thread should do.", EXIT.usage);
  await withServer(options, OPERATE, async (api, host) => {
    const threadId = threadIdOf(host, thread);
    const sent = await api.call<{ runId: string; delivery: string; degraded: boolean; reason: string }>(
      "POST",
      `/threads/${encodeURIComponent(threadId)}/messages`,
      {
        message,
        mode: options.mode ?? "auto",
      },
    );
    if (options.json) printJson(sent);
    else
      process.stdout.write(
        `${sent.delivery} (run ${sent.runId})${sent.degraded ? style(` degraded: ${sent.reason}`, "yellow") : ""}\nWait for it with: switchyard threads wait ${threadId} --run ${sent.runId}\n`,
      );
  });
}

/** `switchyard threads wait <thread>`: waits, asking again until the deadline; the exit code is the run's outcome. */
async function waitForThread(
  thread: string,
  options: { run?: string; timeout?: number; home?: string; json?: boolean },
): Promise<void> {
  await withServer(options, { ...READ, follows: true }, async (api, host) => {
    const threadId = threadIdOf(host, thread);
    const deadline = Date.now() + (options.timeout ?? DEFAULT_WAIT_MS);
    let runId = options.run;
    let cursor: string | undefined;
    let result: WaitResult;
    // Each request is capped by the server's maxWaitMs and answers waitTimedOut; a question or
    // an approval ends it too (said on stderr, once each: the cursor). Ask again until the deadline.
    for (let attempt = 0; ; attempt++) {
      const remaining = Math.max(1000, deadline - Date.now());
      const query = new URLSearchParams({ timeoutMs: String(Math.min(remaining, 600_000)) });
      if (runId !== undefined) query.set("runId", runId);
      if (cursor !== undefined) query.set("cursor", cursor);
      result = await api.call("GET", `/threads/${encodeURIComponent(threadId)}/wait?${query.toString()}`);
      runId ??= result.runId ?? undefined;
      cursor = result.cursor;
      if (result.attention !== null && !options.json) {
        const verb =
          result.attention.kind === "approval"
            ? `approve ${threadId} (or decline)`
            : `decline ${threadId} to dismiss it, or answer it in the web UI`;
        process.stderr.write(
          style(
            `needs ${result.attention.kind === "approval" ? "approval" : "an answer"} (request ${result.attention.requestId}): switchyard threads ${verb}\n`,
            "yellow",
            process.stderr,
          ),
        );
      }
      const ended = !result.waitTimedOut && result.attention === null;
      if (ended || Date.now() >= deadline || attempt >= 10_000) break;
    }
    if (options.json) printJson(result);
    else {
      process.stdout.write(
        `${result.runId ?? "(no run)"}: ${statusText(result.status)}${result.waitTimedOut ? style(" (still running; the wait timed out)", "yellow") : ""}\n`,
      );
      if (result.error) process.stdout.write(`${style("error:", "red")} ${result.error.message}\n`);
      if (result.summary) process.stdout.write(`${result.summary}\n`);
    }
    process.exitCode = result.endedBy === "idle" ? EXIT.ok : exitCodeForRun(result.status);
  });
}
