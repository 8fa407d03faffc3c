import { z } from "zod";
import { ClientRequestId, threadReference } from "./fields.js";
import { ChangeSetDecisionSchema } from "./workspace.js";

/** apply_changes / applyChanges: a child's change set merged or cherry-picked into the workspace it goes back to. */
export const ApplyChangesInput = z
  .object({
    threadId: threadReference("The child thread (a task's childThreadId)"),
    method: z.enum(["merge", "cherry-pick"]).optional(),
    clientRequestId: ClientRequestId.optional(),
    timeoutMs: z
      .number()
      .int()
      .min(0)
      .max(600_000)
      .optional()
      .describe("How long to wait for the outcome; capped by the server's maximum wait."),
  })
  .strict();

export const ApplyChangesOutput = ChangeSetDecisionSchema;
