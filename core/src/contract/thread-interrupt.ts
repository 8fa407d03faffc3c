import { z } from "zod";
import type { ThreadManagementService } from "../services/thread-management-service.js";
import { RunStatus, threadReference } from "./fields.js";

/** t3_thread_interrupt / interruptThread: a run interrupted (without runId, the newest interruptible one). */
export const ThreadInterruptInput = z
  .object({ threadId: threadReference("The thread"), runId: z.string().min(1).optional() })
  .strict();

export const ThreadInterruptOutput = z.object({
  threadId: z.string(),
  status: z.enum(["interrupt_requested", "already_terminal", "no_active_run"]),
  runId: z.string().nullable(),
  runStatus: RunStatus.nullable(),
});

export function threadInterruptAnswer(
  threadId: string,
  result: Awaited<ReturnType<ThreadManagementService["interruptFromCaller"]>>,
): z.input<typeof ThreadInterruptOutput> {
  return { threadId, status: result.status, runId: result.run?.id ?? null, runStatus: result.run?.status ?? null };
}
