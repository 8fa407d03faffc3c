import { z } from "zod";
import type { ThreadManagementService } from "../services/thread-management-service.js";
import { ClientRequestId, threadReference } from "./fields.js";
import { ThreadShell } from "./thread-shell.js";
import type { ThreadShells } from "./thread-shells.js";

/** set_thread_settled / setThreadSettled: a thread settled or revived. */
export const SetThreadSettledInput = z
  .object({
    threadId: threadReference("The thread"),
    settled: z.boolean().describe("true settles the thread, false revives it."),
    clientRequestId: ClientRequestId.optional(),
  })
  .strict();

export const SetThreadSettledOutput = z.object({
  thread: ThreadShell,
  changed: z.boolean().describe("False when the thread already was as asked."),
  replayed: z.boolean(),
});

export async function setThreadSettledAnswer(
  result: Awaited<ReturnType<ThreadManagementService["setSettledFromCaller"]>>,
  shells: ThreadShells,
): Promise<z.input<typeof SetThreadSettledOutput>> {
  return { thread: await shells.shell(result.thread), changed: result.changed, replayed: result.replayed };
}
