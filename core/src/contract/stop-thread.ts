import { z } from "zod";
import type { ThreadManagementService } from "../services/thread-management-service.js";
import { ClientRequestId, threadReference } from "./fields.js";
import { ThreadShell } from "./thread-shell.js";
import type { ThreadShells } from "./thread-shells.js";

/** stopThread (HTTP API): like the user's Stop button, the running turn interrupted and queued runs held. */
export const StopThreadInput = z
  .object({
    threadId: threadReference("The thread"),
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

export async function stopThreadAnswer(
  stopped: Awaited<ReturnType<ThreadManagementService["stopFromCaller"]>>,
  shells: ThreadShells,
): Promise<z.input<typeof StopThreadResult>> {
  return {
    thread: await shells.shell(stopped.thread),
    interruptedRunId: stopped.interruptedRunId,
    heldRunIds: stopped.heldRunIds,
    replayed: stopped.replayed,
  };
}
