import { z } from "zod";
import type { SnoozeOutcome } from "../services/threads/thread-snoozing.js";
import { ClientRequestId, threadReference } from "./fields.js";
import { ThreadShell } from "./thread-shell.js";
import type { ThreadShells } from "./thread-shells.js";

/** snoozeThread (HTTP API): a thread hidden until a time, with seed 000's snooze rules. */
export const SnoozeThreadInput = z
  .object({
    threadId: threadReference("The thread"),
    until: z
      .string()
      .min(1)
      .max(100)
      .describe("When it wakes: an ISO-8601 time in the future (2026-12-08T09:00:00Z); a later snooze replaces it."),
    clientRequestId: ClientRequestId.optional(),
  })
  .strict();

/** The answer of snoozeThread and unsnoozeThread: the thread's shell after it. */
export const SnoozeThreadOutput = z.object({
  thread: ThreadShell,
  changed: z.boolean().describe("False when the thread already was as asked."),
  replayed: z.boolean(),
});

export async function snoozeThreadAnswer(
  outcome: SnoozeOutcome,
  shells: ThreadShells,
): Promise<z.input<typeof SnoozeThreadOutput>> {
  return { thread: await shells.shell(outcome.thread), changed: outcome.changed, replayed: outcome.replayed };
}
