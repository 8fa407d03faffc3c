import { z } from "zod";
import { callerFromScope } from "../caller-from-scope.js";
import { ChangeSetDecisionSchema, ClientRequestId } from "../contract.js";
import { CHANGES_STATE, defineTool } from "../tool-definition.js";

export const applyChangesTool = defineTool({
  name: "apply_changes",
  title: "Apply a child's changes",
  description:
    'Applies the change set of a child that worked in its own worktree to your workspace: "merge" (default; a fast-forward when your branch has not moved) or "cherry-pick" (its commits onto your branch). The result is worked out before your files change: a conflict (with your branch, or with uncommitted changes of yours) changes nothing and lists the files. Applying again later brings only what is new. Needs your live run, runtime mode auto-accept-edits or full-access, and the child\'s run to have ended.',
  input: z
    .object({
      threadId: z.string().min(1).describe("The child thread (a task's childThreadId)."),
      method: z.enum(["merge", "cherry-pick"]).optional(),
      clientRequestId: ClientRequestId.optional(),
      timeoutMs: z.number().int().min(0).max(600_000).optional().describe("How long to wait for the outcome; capped by the server's maximum wait."),
    })
    .strict(),
  output: ChangeSetDecisionSchema,
  annotations: CHANGES_STATE,
  requires: "orchestration:operate",
  handle: (input, { scope, services, signal }) => services.changeSets.apply(callerFromScope(scope), input, signal),
});
