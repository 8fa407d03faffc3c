import { z } from "zod";
import { RunStatus } from "../contract.js";
import { callerFromScope } from "../caller-from-scope.js";
import { defineTool, READ_ONLY } from "../tool-definition.js";
import { threadLink } from "../../../services/thread-views.js";

export const threadWaitTool = defineTool({
  name: "t3_thread_wait",
  title: "Wait for a thread run",
  description:
    "Waits for a run to become completed, failed, cancelled or interrupted. Without runId it pins the latest run at call time, queued or not (so a wait right after a queued send waits for that message, not an older answer); an idle thread returns at once. The wait is capped by the server's maximum; a timeout (waitTimedOut) reports the latest status and cancels nothing: call it again to keep waiting.",
  input: z
    .object({
      threadId: z.string().min(1),
      runId: z.string().min(1).optional(),
      timeoutMs: z.number().int().min(0).max(3_600_000).optional(),
    })
    .strict(),
  output: z.object({
    threadId: z.string(),
    threadLink: z.string(),
    runId: z.string().nullable(),
    status: z.union([RunStatus, z.literal("idle")]),
    summary: z.string().nullable(),
    error: z.object({ code: z.string().optional(), message: z.string() }).nullable(),
    waitTimedOut: z.boolean(),
  }),
  annotations: READ_ONLY,
  requires: "orchestration:read",
  handle: async (input, { scope, services, signal, reportProgress }) => {
    const result = await services.threads.waitFromCaller(callerFromScope(scope), {
      threadId: input.threadId,
      ...(input.runId !== undefined ? { runId: input.runId } : {}),
      ...(input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {}),
      signal,
      onProgress: () => void reportProgress(`waiting for ${input.threadId}`),
    });
    return {
      threadId: result.threadId,
      threadLink: threadLink(services.environmentId, result.threadId),
      runId: result.run?.id ?? null,
      status: result.run?.status ?? ("idle" as const),
      summary: result.run?.summary ?? null,
      error: result.run?.error ?? null,
      waitTimedOut: result.timedOut,
    };
  },
});
