import {
  setThreadSettledAnswer,
  SetThreadSettledInput,
  SetThreadSettledOutput,
} from "../../../../contract/set-thread-settled.js";
import { resumeThreadAnswer, ResumeThreadInput, ResumeThreadResult } from "../../../../contract/resume-thread.js";
import { stopThreadAnswer, StopThreadInput, StopThreadResult } from "../../../../contract/stop-thread.js";
import {
  threadInterruptAnswer,
  ThreadInterruptInput,
  ThreadInterruptOutput,
} from "../../../../contract/thread-interrupt.js";
import { threadSendAnswer, ThreadSendInput, ThreadSendOutput } from "../../../../contract/thread-send.js";
import { ThreadWaitInput, threadWaitRequest, WaitResult, waitResultView } from "../../../../contract/thread-wait.js";
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
  body: ThreadSendInput.omit({ threadId: true }),
  idempotencyKey: "clientRequestId",
  input: ThreadSendInput,
  output: ThreadSendOutput,
  outputName: "SendResult",
  handle: async (input, { caller, services }) =>
    threadSendAnswer(services.threadLinks, await services.threads.sendFromCaller(caller, input)),
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
  query: ThreadWaitInput.omit({ threadId: true }),
  input: ThreadWaitInput,
  output: WaitResult,
  outputName: "WaitResult",
  handle: async (input, { caller, services, signal }) => {
    const result = await services.threads.waitFromCaller(caller, threadWaitRequest(input, { signal }));
    return waitResultView(services.threadLinks, result);
  },
});

export const interruptThreadRoute = defineRoute({
  method: "POST",
  path: "/threads/{threadId}/interrupt",
  operationId: "interruptThread",
  summary: "Interrupt a thread's run",
  description:
    "t3_thread_interrupt: without runId, the newest interruptible run. A terminal run is returned unchanged (already_terminal); a thread with no active turn answers no_active_run. Queued runs still start afterwards; use stop to hold them.",
  tag: "threads",
  requires: "orchestration:operate",
  params: ThreadPath,
  body: ThreadInterruptInput.omit({ threadId: true }),
  input: ThreadInterruptInput,
  output: ThreadInterruptOutput,
  outputName: "InterruptResult",
  handle: async (input, { caller, services }) =>
    threadInterruptAnswer(input.threadId, await services.threads.interruptFromCaller(caller, input)),
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
  handle: async (input, { caller, services }) =>
    stopThreadAnswer(await services.threads.stopFromCaller(caller, input), services.queries),
});

export const resumeThreadRoute = defineRoute({
  method: "POST",
  path: "/threads/{threadId}/resume",
  operationId: "resumeThread",
  summary: "Resume a stopped thread",
  description:
    "The runs stop held start again in their queue order; nothing else starts. A thread that was not stopped is unchanged.",
  tag: "threads",
  requires: "orchestration:operate",
  params: ThreadPath,
  body: ResumeThreadInput.omit({ threadId: true }),
  idempotencyKey: "clientRequestId",
  input: ResumeThreadInput,
  output: ResumeThreadResult,
  outputName: "ResumeResult",
  handle: async (input, { caller, services }) =>
    resumeThreadAnswer(await services.threads.resumeFromCaller(caller, input), services.queries),
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
  body: SetThreadSettledInput.omit({ threadId: true }),
  idempotencyKey: "clientRequestId",
  input: SetThreadSettledInput,
  output: SetThreadSettledOutput,
  outputName: "SettleResult",
  handle: async (input, { caller, services }) =>
    setThreadSettledAnswer(await services.threads.setSettledFromCaller(caller, input), services.queries),
});
