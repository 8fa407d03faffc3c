import { z } from "zod";
import { RunStatus } from "../contract.js";
import { callerFromScope } from "../caller-from-scope.js";
import { defineTool, READ_ONLY } from "../tool-definition.js";
import { threadLink } from "../../../services/thread-views.js";
import type { RunWaitResult } from "../../../services/thread-management-service.js";

/** A wait cursor: the event sequence of the last request a wait reported, as digits. */
export const WaitCursor = z
  .string()
  .regex(/^\d{1,15}$/, "cursor is the cursor a previous t3_thread_wait returned (digits).")
  .describe("The cursor the previous wait on this thread returned: requests it reported already do not end this wait again.");

export const WaitResult = z.object({
  threadId: z.string(),
  threadLink: z.string(),
  runId: z.string().nullable(),
  status: z.union([RunStatus, z.literal("idle")]),
  summary: z.string().nullable(),
  error: z.object({ code: z.string().optional(), message: z.string() }).nullable(),
  waitTimedOut: z.boolean(),
  endedBy: z.enum(["idle", "run_finished", "question", "approval", "timeout"]).describe("What ended the wait."),
  attention: z
    .object({
      kind: z.enum(["question", "approval"]),
      requestId: z.string().describe("Read or answer it with t3_pending_request (approvals are answered by a person or an approve token)."),
      requestKind: z.enum(["user_input", "command", "file-read", "file-change", "mcp-elicitation", "permission"]),
      runId: z.string(),
    })
    .nullable()
    .describe("The request that ended the wait (endedBy question or approval), else null."),
  cursor: z.string().describe("Pass it to the next wait on this thread."),
});

export const threadWaitTool = defineTool({
  name: "t3_thread_wait",
  title: "Wait for a thread run",
  description:
    "Waits until a run becomes completed, failed, cancelled or interrupted, or the thread needs attention: a blocking question or an approval opens. endedBy says which (run_finished, question, approval; idle when the thread has no run, timeout), and attention names the request. Pass the returned cursor to the next wait so a request already reported does not end it again: successive waits report each new question or approval once, then the finished run. Without runId it pins the latest run at call time, queued or not (so a wait right after a queued send waits for that message, not an older answer). The wait is capped by the server's maximum; a timeout (waitTimedOut) reports the latest status and cancels nothing: call it again to keep waiting.",
  input: z
    .object({
      threadId: z.string().min(1),
      runId: z.string().min(1).optional(),
      timeoutMs: z.number().int().min(0).max(3_600_000).optional(),
      cursor: WaitCursor.optional(),
    })
    .strict(),
  output: WaitResult,
  annotations: READ_ONLY,
  requires: "orchestration:read",
  handle: async (input, { scope, services, signal, reportProgress }) => {
    const result = await services.threads.waitFromCaller(callerFromScope(scope), {
      threadId: input.threadId,
      ...(input.runId !== undefined ? { runId: input.runId } : {}),
      ...(input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {}),
      ...(input.cursor !== undefined ? { cursor: Number(input.cursor) } : {}),
      signal,
      onProgress: () => void reportProgress(`waiting for ${input.threadId}`),
    });
    return waitResultView(services.environmentId, result);
  },
});

/** A wait's outcome as t3_thread_wait and the API answer it. */
export function waitResultView(environmentId: string, result: RunWaitResult): z.input<typeof WaitResult> {
  const request = result.attention?.request ?? null;
  return {
    threadId: result.threadId,
    threadLink: threadLink(environmentId, result.threadId),
    runId: result.run?.id ?? null,
    status: result.run?.status ?? ("idle" as const),
    summary: result.run?.summary ?? null,
    error: result.run?.error ?? null,
    waitTimedOut: result.timedOut,
    endedBy: result.endedBy,
    attention:
      request === null
        ? null
        : { kind: result.attention!.kind, requestId: request.id, requestKind: request.kind === "user_input" ? "user_input" : (request.approvalKind ?? "permission"), runId: request.runId },
    cursor: String(result.cursor),
  };
}
