import type { Command } from "commander";
import { CliError, EXIT, printJson, style } from "../output.js";
import { withServer, type CommandAccess, type ServerApi } from "../server-api.js";
import { threadIdOf } from "../thread-arguments.js";

const OPERATE: CommandAccess = {
  verbs: ["orchestration:read", "orchestration:operate"],
  command: "switchyard threads",
};
/** Approving and declining answer approvals (approve) and dismiss questions (operate). */
const ANSWER: CommandAccess = {
  verbs: ["orchestration:read", "orchestration:operate", "orchestration:approve"],
  command: "switchyard threads",
};

interface PendingRequest {
  requestId: string;
  kind: "approval" | "user_input";
  status: string;
  questions: { id: string; question: string }[];
  approval: { approvalKind: string; title: string } | null;
}

function requestText(request: PendingRequest): string {
  return request.approval !== null
    ? `${request.approval.title} (${request.approval.approvalKind})`
    : request.questions.map((q) => q.question).join(" / ");
}

/**
 * The pending request a command answers: the one named, else the thread's only one of the kinds
 * it takes. None, or several without a name, is refused saying which there are.
 */
async function pendingRequest(
  api: ServerApi,
  threadId: string,
  requestId: string | undefined,
  kinds: readonly PendingRequest["kind"][],
): Promise<PendingRequest> {
  const { requests } = await api.call<{ requests: PendingRequest[] }>(
    "GET",
    `/threads/${encodeURIComponent(threadId)}/pending-requests`,
  );
  const open = requests.filter((request) => request.status === "pending" && kinds.includes(request.kind));
  if (requestId !== undefined) {
    const named = requests.find((request) => request.requestId === requestId);
    if (named === undefined)
      throw new CliError(
        `Thread ${threadId} has no pending request ${requestId}.${open.length > 0 ? ` Its pending ones: ${open.map((r) => r.requestId).join(", ")}.` : ""}`,
        EXIT.notFound,
      );
    if (!kinds.includes(named.kind))
      throw new CliError(
        `Request ${requestId} is a question, not an approval: answer it in the web UI (switchyard ui), or dismiss it with switchyard threads decline ${threadId} ${requestId}.`,
        EXIT.usage,
      );
    return named;
  }
  const what = kinds.length === 1 ? "approval" : "approval or question";
  if (open.length === 0) throw new CliError(`Thread ${threadId} has no pending ${what}.`, EXIT.notFound);
  if (open.length > 1) {
    throw new CliError(
      `Thread ${threadId} has ${open.length} pending requests; name one:\n${open.map((r) => `  ${r.requestId}  ${requestText(r)}`).join("\n")}`,
      EXIT.usage,
    );
  }
  return open[0]!;
}

export function registerThreadControl(threads: Command): void {
  threads
    .command("stop <thread>")
    .description(
      "Stop a thread, like the UI's Stop: interrupt its running turn and hold its queued runs until resume or the next message",
    )
    .option("--reason <text>", "recorded as the interrupted run's reason")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (thread: string, options: { reason?: string; home?: string; json?: boolean }) => {
      await withServer(options, OPERATE, async (api, host) => {
        const threadId = threadIdOf(host, thread);
        const stopped = await api.call<{ interruptedRunId: string | null; heldRunIds: string[] }>(
          "POST",
          `/threads/${encodeURIComponent(threadId)}/stop`,
          {
            ...(options.reason !== undefined ? { reason: options.reason } : {}),
          },
        );
        if (options.json) printJson(stopped);
        else {
          const interrupted =
            stopped.interruptedRunId !== null ? `interrupting run ${stopped.interruptedRunId}` : "no run was running";
          const held =
            stopped.heldRunIds.length > 0
              ? `; ${stopped.heldRunIds.length} queued run(s) held until \`switchyard threads resume ${threadId}\``
              : "";
          process.stdout.write(`Stopped ${threadId}: ${interrupted}${held}.\n`);
        }
      });
    });

  threads
    .command("interrupt <thread>")
    .description(
      "Interrupt a thread's running turn (the newest interruptible run, or --run); its queued runs still start afterwards (stop holds them)",
    )
    .option("--run <runId>", "the run to interrupt")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (thread: string, options: { run?: string; home?: string; json?: boolean }) => {
      await withServer(options, OPERATE, async (api, host) => {
        const threadId = threadIdOf(host, thread);
        const result = await api.call<{ status: string; runId: string | null; runStatus: string | null }>(
          "POST",
          `/threads/${encodeURIComponent(threadId)}/interrupt`,
          {
            ...(options.run !== undefined ? { runId: options.run } : {}),
          },
        );
        if (options.json) printJson(result);
        else if (result.status === "interrupt_requested")
          process.stdout.write(`Interrupting run ${result.runId} of ${threadId}.\n`);
        else if (result.status === "already_terminal")
          process.stdout.write(`Run ${result.runId} of ${threadId} had already ended (${result.runStatus}).\n`);
        else process.stdout.write(`${threadId} has no running turn to interrupt.\n`);
      });
    });

  threads
    .command("resume <thread>")
    .description("Resume a stopped thread: the runs stop held start again in their queue order")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (thread: string, options: { home?: string; json?: boolean }) => {
      await withServer(options, OPERATE, async (api, host) => {
        const threadId = threadIdOf(host, thread);
        const resumed = await api.call<{ resumedRunIds: string[] }>(
          "POST",
          `/threads/${encodeURIComponent(threadId)}/resume`,
          {},
        );
        if (options.json) printJson(resumed);
        else
          process.stdout.write(
            resumed.resumedRunIds.length > 0
              ? `Resumed ${threadId}: ${resumed.resumedRunIds.join(", ")} start again.\n`
              : `${threadId} had no held runs; nothing changed.\n`,
          );
      });
    });

  threads
    .command("approve <thread> [requestId]")
    .description("Approve a thread's pending approval (its only one, or requestId)")
    .option("--for-session", "approve this kind of action for the rest of the thread's session")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(
      async (
        thread: string,
        requestId: string | undefined,
        options: { forSession?: boolean; home?: string; json?: boolean },
      ) => {
        await withServer(options, ANSWER, async (api, host) => {
          const threadId = threadIdOf(host, thread);
          const request = await pendingRequest(api, threadId, requestId, ["approval"]);
          const decision = options.forSession ? "accept_for_session" : "accept";
          const answered = await api.call<PendingRequest>(
            "POST",
            `/threads/${encodeURIComponent(threadId)}/pending-requests/${encodeURIComponent(request.requestId)}/respond`,
            { decision },
          );
          if (options.json) printJson(answered);
          else
            process.stdout.write(
              `${style("Approved", "green")}${options.forSession ? " for the session" : ""}: ${requestText(request)} (request ${request.requestId}).\n`,
            );
        });
      },
    );

  threads
    .command("decline <thread> [requestId]")
    .description("Decline a thread's pending approval, or dismiss its question (its only one, or requestId)")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (thread: string, requestId: string | undefined, options: { home?: string; json?: boolean }) => {
      await withServer(options, ANSWER, async (api, host) => {
        const threadId = threadIdOf(host, thread);
        const request = await pendingRequest(api, threadId, requestId, ["approval", "user_input"]);
        const body = request.kind === "approval" ? { decision: "decline" } : { dismiss: true };
        const answered = await api.call<PendingRequest>(
          "POST",
          `/threads/${encodeURIComponent(threadId)}/pending-requests/${encodeURIComponent(request.requestId)}/respond`,
          body,
        );
        if (options.json) printJson(answered);
        else
          process.stdout.write(
            `${request.kind === "approval" ? "Declined" : "Dismissed"}: ${requestText(request)} (request ${request.requestId}).\n`,
          );
      });
    });
}
