import { z } from "zod";
import { ClientRequestId, threadReference } from "./fields.js";
import { ChangeSetDecisionSchema } from "./workspace.js";

/** discard_changes / discardChanges: a child's worktree (and by default its branch) removed unapplied. */
export const DiscardChangesInput = z
  .object({
    threadId: threadReference("The child thread (a task's childThreadId)"),
    keepBranch: z.boolean().optional(),
    clientRequestId: ClientRequestId.optional(),
    timeoutMs: z.number().int().min(0).max(600_000).optional(),
  })
  .strict();

export const DiscardChangesOutput = ChangeSetDecisionSchema;
