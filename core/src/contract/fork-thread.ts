import { z } from "zod";
import type { ThreadForkService } from "../services/thread-fork-service.js";
import { ClientRequestId, threadReference } from "./fields.js";
import { ThreadShell } from "./thread-shell.js";
import type { ThreadShells } from "./thread-shells.js";

/** forkThread (HTTP API): the source thread, and what the fork may differ in. */
export const ForkThreadInput = z
  .object({
    threadId: threadReference("The thread"),
    title: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe('The fork\'s title (trimmed); default "<source title> (fork)".'),
    afterRunId: z
      .string()
      .min(1)
      .optional()
      .describe("Fork the conversation as it was after this run of the source thread, not as it is now."),
    clientRequestId: ClientRequestId.optional(),
  })
  .strict();

export const ForkThreadResult = z.object({
  thread: ThreadShell,
  strategy: z
    .enum(["native", "portable"])
    .describe(
      "native: the provider copied the conversation; portable: it travels as context with the fork's first turn.",
    ),
  reason: z.string().describe("Why that strategy (the shared fork policy's reason, or why a native fork fell back)."),
  transferId: z.string(),
  replayed: z.boolean(),
});

export async function forkThreadAnswer(
  fork: Awaited<ReturnType<ThreadForkService["forkFromCaller"]>>,
  shells: ThreadShells,
): Promise<z.input<typeof ForkThreadResult>> {
  return {
    thread: await shells.shell(fork.thread),
    strategy: fork.strategy,
    reason: fork.reason,
    transferId: fork.transferId,
    replayed: fork.replayed,
  };
}
