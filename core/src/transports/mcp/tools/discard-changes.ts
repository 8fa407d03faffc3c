import { z } from "zod";
import { callerFromScope } from "../caller-from-scope.js";
import { ChangeSetDecisionSchema, ClientRequestId } from "../contract.js";
import { defineTool, STOPS_WORK } from "../tool-definition.js";

export const discardChangesTool = defineTool({
  name: "discard_changes",
  title: "Discard a child's changes",
  description:
    "Removes a child's own worktree and its branch without applying them. keepBranch: true removes only the worktree and keeps the branch, for a pull request (link_pull_request). Worktrees Switchyard did not make (workspace \"existing\") are never removed. Needs your live run and the child's run to have ended.",
  input: z
    .object({
      threadId: z.string().min(1).describe("The child thread (a task's childThreadId)."),
      keepBranch: z.boolean().optional(),
      clientRequestId: ClientRequestId.optional(),
      timeoutMs: z.number().int().min(0).max(600_000).optional(),
    })
    .strict(),
  output: ChangeSetDecisionSchema,
  annotations: STOPS_WORK,
  requires: "orchestration:operate",
  handle: (input, { scope, services, signal }) => services.changeSets.discard(callerFromScope(scope), input, signal),
});
