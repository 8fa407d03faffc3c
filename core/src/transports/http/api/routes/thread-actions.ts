import { z } from "zod";
import { threadLink } from "../../../../services/thread-views.js";
import { ClientRequestId, ThreadShell } from "../../../mcp/contract.js";
import { setThreadSettledTool } from "../../../mcp/tools/set-thread-settled.js";
import { threadInterruptTool } from "../../../mcp/tools/thread-interrupt.js";
import { threadSendTool } from "../../../mcp/tools/thread-send.js";
import { threadWaitTool, waitResultView } from "../../../mcp/tools/thread-wait.js";
import { defineRoute } from "../api-route.js";
import { ThreadPath } from "./threads.js";

export const sendMessageRoute = defineRoute({
  method: "POST",
  path: "/threads/{threadId}/messages",
  operationId: "sendMessage",
  summary: "Send a message to a thread (auto, queue, steer or restart)",
  description:
    't3_thread_send: mode "auto" (default) starts an idle thread, steers a fully active turn or queues behind one that is not steerable yet; "queue" runs after active work; "steer" and "restart" need a running turn. The result says what was asked, what was done, and degraded when that is less. The thread may not run with broader modes than the token\'s ceiling. Idempotency-Key (or clientRequestId) makes a retry return the same message.',
  tag: "threads",
  requires: "orchestration:operate",
  params: ThreadPath,
  body: threadSendTool.input.omit({ threadId: true }),
  idempotencyKey: "clientRequestId",
  input: threadSendTool.input,
  output: threadSendTool.output,
  outputName: "SendResult",
  handle: (input, { caller, services }) => {
    const result = services.threads.sendFromCaller(caller, input);
    return {
      threadId: result.threadId,
      threadLink: threadLink(services.environmentId, result.threadId),
      messageId: result.messageId,
      runId: result.runId,
      delivery: result.delivery,
      asked: result.decision.asked,
      action: result.decision.action,
      degraded: result.decision.degraded,
      reason: result.decision.reason,
      replayed: result.replayed,
    };
  },
});

export const waitForRunRoute = defineRoute({
  method: "GET",
  path: "/threads/{threadId}/wait",
  operationId: "waitForRun",
  summary: "Wait for a thread's run to end",
  description:
    "t3_thread_wait: ends when the run ends or the thread needs attention (a blocking question or an approval opens); endedBy says which and attention names the request; pass the returned cursor to the next wait so a request already reported does not end it again. Without runId it pins the latest run at call time, queued or not; an idle thread answers at once. The wait is capped by the server's maximum (server.maxWaitMs); waitTimedOut reports the latest status and cancels nothing: call again to keep waiting. Closing the connection ends the wait, not the run.",
  tag: "threads",
  requires: "orchestration:read",
  params: ThreadPath,
  query: threadWaitTool.input.omit({ threadId: true }),
  input: threadWaitTool.input,
  output: threadWaitTool.output,
  outputName: "WaitResult",
  handle: async (input, { caller, services, signal }) => {
    const result = await services.threads.waitFromCaller(caller, {
      threadId: input.threadId,
      ...(input.runId !== undefined ? { runId: input.runId } : {}),
      ...(input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {}),
      ...(input.cursor !== undefined ? { cursor: Number(input.cursor) } : {}),
      signal,
    });
    return waitResultView(services.environmentId, result);
  },
});

export const interruptThreadRoute = defineRoute({
  method: "POST",
  path: "/threads/{threadId}/interrupt",
  operationId: "interruptThread",
  summary: "Interrupt a thread's run",
  description: "t3_thread_interrupt: without runId, the newest interruptible run. A terminal run is returned unchanged (already_terminal); a thread with no active turn answers no_active_run. Queued runs still start afterwards; use stop to hold them.",
  tag: "threads",
  requires: "orchestration:operate",
  params: ThreadPath,
  body: threadInterruptTool.input.omit({ threadId: true }),
  input: threadInterruptTool.input,
  output: threadInterruptTool.output,
  outputName: "InterruptResult",
  handle: (input, { caller, services }) => {
    const result = services.threads.interruptFromCaller(caller, input);
    return { threadId: input.threadId, status: result.status, runId: result.run?.id ?? null, runStatus: result.run?.status ?? null };
  },
});

/** Stop's input: like the user's Stop button. */
export const StopThreadInput = z
  .object({
    threadId: z.string().min(1),
    reason: z.string().min(1).max(1_000).optional().describe("Recorded as the interrupted run's reason."),
    clientRequestId: ClientRequestId.optional(),
  })
  .strict();

export const StopThreadResult = z.object({
  thread: ThreadShell,
  interruptedRunId: z.string().nullable().describe("The run that was active and is being interrupted, or null."),
  heldRunIds: z.array(z.string()).describe("Queued runs held until resume or the next message, in queue order."),
  replayed: z.boolean(),
});

export const stopThreadRoute = defineRoute({
  method: "POST",
  path: "/threads/{threadId}/stop",
  operationId: "stopThread",
  summary: "Stop a thread: interrupt its turn and hold its queued runs",
  description:
    "Like the user's Stop: the running turn is interrupted and queued runs are held until resume or the next message sent to the thread. The system starts no turn in a stopped thread on its own (results and questions wait). A provider that cannot interrupt a turn already running answers thread_not_interruptible.",
  tag: "threads",
  requires: "orchestration:operate",
  params: ThreadPath,
  body: StopThreadInput.omit({ threadId: true }),
  idempotencyKey: "clientRequestId",
  input: StopThreadInput,
  output: StopThreadResult,
  outputName: "StopResult",
  handle: (input, { caller, services }) => {
    const stopped = services.threads.stopFromCaller(caller, input);
    return { thread: services.queries.shell(stopped.thread), interruptedRunId: stopped.interruptedRunId, heldRunIds: stopped.heldRunIds, replayed: stopped.replayed };
  },
});

export const ResumeThreadInput = z.object({ threadId: z.string().min(1), clientRequestId: ClientRequestId.optional() }).strict();

export const ResumeThreadResult = z.object({
  thread: ThreadShell,
  resumedRunIds: z.array(z.string()).describe("The held runs that start again, in their queue order."),
  replayed: z.boolean(),
});

export const resumeThreadRoute = defineRoute({
  method: "POST",
  path: "/threads/{threadId}/resume",
  operationId: "resumeThread",
  summary: "Resume a stopped thread",
  description: "The runs stop held start again in their queue order; nothing else starts. A thread that was not stopped is unchanged.",
  tag: "threads",
  requires: "orchestration:operate",
  params: ThreadPath,
  body: ResumeThreadInput.omit({ threadId: true }),
  idempotencyKey: "clientRequestId",
  input: ResumeThreadInput,
  output: ResumeThreadResult,
  outputName: "ResumeResult",
  handle: (input, { caller, services }) => {
    const resumed = services.threads.resumeFromCaller(caller, input);
    return { thread: services.queries.shell(resumed.thread), resumedRunIds: resumed.resumedRunIds, replayed: resumed.replayed };
  },
});

export const setThreadSettledRoute = defineRoute({
  method: "POST",
  path: "/threads/{threadId}/settled",
  operationId: "setThreadSettled",
  summary: "Settle or revive a thread",
  description:
    "set_thread_settled: settled true settles a thread whose work is done (listThreads settled=false leaves it out), false revives it; a message sent to a settled thread revives it too. Settling is refused (invalid_request, details.reason) while the thread has unfinished or queued runs, pending requests or unfinished delegated tasks. Settling a settled thread changes nothing (changed: false). Idempotency-Key (or clientRequestId) makes a retry return the same answer.",
  tag: "threads",
  requires: "orchestration:operate",
  params: ThreadPath,
  body: setThreadSettledTool.input.omit({ threadId: true }),
  idempotencyKey: "clientRequestId",
  input: setThreadSettledTool.input,
  output: setThreadSettledTool.output,
  outputName: "SettleResult",
  handle: (input, { caller, services }) => {
    const result = services.threads.setSettledFromCaller(caller, input);
    return { thread: services.queries.shell(result.thread), changed: result.changed, replayed: result.replayed };
  },
});
