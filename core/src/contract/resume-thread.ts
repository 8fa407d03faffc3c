import { z } from "zod";
import type { ThreadManagementService } from "../services/thread-management-service.js";
import { ClientRequestId, threadReference } from "./fields.js";
import { ThreadShell } from "./thread-shell.js";
import type { ThreadShells } from "./thread-shells.js";

/** resumeThread (HTTP API): a stopped thread's held runs started again. */
export const ResumeThreadInput = z
  .object({ threadId: threadReference("The thread"), clientRequestId: ClientRequestId.optional() })
  .strict();

export const ResumeThreadResult = z.object({
  thread: ThreadShell,
  resumedRunIds: z.array(z.string()).describe("The held runs that start again, in their queue order."),
  replayed: z.boolean(),
});

export async function resumeThreadAnswer(
  resumed: Awaited<ReturnType<ThreadManagementService["resumeFromCaller"]>>,
  shells: ThreadShells,
): Promise<z.input<typeof ResumeThreadResult>> {
  return {
    thread: await shells.shell(resumed.thread),
    resumedRunIds: resumed.resumedRunIds,
    replayed: resumed.replayed,
  };
}
