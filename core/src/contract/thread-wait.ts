import { z } from "zod";
import type { RunWaitResult, ThreadManagementService } from "../services/thread-management-service.js";
import type { ThreadLinks } from "../services/thread-links.js";
import { RunStatus, threadReference } from "./fields.js";

/** A wait cursor: the event sequence of the last request a wait reported, as digits. */
export const WaitCursor = z
  .string()
  .regex(/^\d{1,15}$/, "cursor is the cursor a previous t3_thread_wait returned (digits).")
  .describe(
    "The cursor the previous wait on this thread returned: requests it reported already do not end this wait again.",
  );

/** t3_thread_wait / waitForRun: until a run ends or the thread needs attention. */
export const ThreadWaitInput = z
  .object({
    threadId: threadReference("The thread"),
    runId: z.string().min(1).optional(),
    timeoutMs: z.number().int().min(0).max(3_600_000).optional(),
    cursor: WaitCursor.optional(),
  })
  .strict();

export const WaitResult = z.object({
  threadId: z.string(),
  threadLink: z.string(),
  threadWebUrl: z
    .string()
    .optional()
    .describe(
      "The thread's page in this server's web UI (server.webUrl, else the address it listens on), for clients that cannot open switchyard-thread:// links; absent when no web UI address is known.",
    ),
  runId: z.string().nullable(),
  status: z.union([RunStatus, z.literal("idle")]),
  summary: z.string().nullable(),
  error: z.object({ code: z.string().optional(), message: z.string() }).nullable(),
  waitTimedOut: z.boolean(),
  endedBy: z.enum(["idle", "run_finished", "question", "approval", "timeout"]).describe("What ended the wait."),
  attention: z
    .object({
      kind: z.enum(["question", "approval"]),
      requestId: z
        .string()
        .describe(
          "Read or answer it with t3_pending_request (approvals are answered by a person or an approve token).",
        ),
      requestKind: z.enum(["user_input", "command", "file-read", "file-change", "mcp-elicitation", "permission"]),
      runId: z.string(),
    })
    .nullable()
    .describe("The request that ended the wait (endedBy question or approval), else null."),
  cursor: z.string().describe("Pass it to the next wait on this thread."),
});

type WaitRequest = Parameters<ThreadManagementService["waitFromCaller"]>[1];

/** The service's wait request for an input: the cursor as its event sequence, the call's signal and progress. */
export function threadWaitRequest(
  input: z.output<typeof ThreadWaitInput>,
  call: Pick<WaitRequest, "signal" | "onProgress">,
): WaitRequest {
  return {
    threadId: input.threadId,
    ...(input.runId !== undefined ? { runId: input.runId } : {}),
    ...(input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {}),
    ...(input.cursor !== undefined ? { cursor: Number(input.cursor) } : {}),
    ...call,
  };
}

/** A wait's outcome as t3_thread_wait and the API answer it. */
export function waitResultView(
  links: Pick<ThreadLinks, "link" | "webUrl">,
  result: RunWaitResult,
): z.input<typeof WaitResult> {
  const request = result.attention?.request ?? null;
  const webUrl = links.webUrl(result.threadId);
  return {
    threadId: result.threadId,
    threadLink: links.link(result.threadId),
    ...(webUrl !== undefined ? { threadWebUrl: webUrl } : {}),
    runId: result.run?.id ?? null,
    status: result.run?.status ?? ("idle" as const),
    summary: result.run?.summary ?? null,
    error: result.run?.error ?? null,
    waitTimedOut: result.timedOut,
    endedBy: result.endedBy,
    attention:
      request === null
        ? null
        : {
            kind: result.attention!.kind,
            requestId: request.id,
            requestKind: request.kind === "user_input" ? "user_input" : (request.approvalKind ?? "permission"),
            runId: request.runId,
          },
    cursor: String(result.cursor),
  };
}
