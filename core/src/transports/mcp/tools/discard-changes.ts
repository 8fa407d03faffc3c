import { DiscardChangesInput, DiscardChangesOutput } from "../../../contract/discard-changes.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { defineTool, STOPS_WORK } from "../tool-definition.js";

export const discardChangesTool = defineTool({
  name: "discard_changes",
  title: "Discard a child's changes",
  description:
    "Removes a child's own worktree and its branch without applying them. keepBranch: true removes only the worktree and keeps the branch, for a pull request (link_pull_request). Worktrees Switchyard did not make (workspace \"existing\") are never removed. Needs your live run and the child's run to have ended.",
  input: DiscardChangesInput,
  output: DiscardChangesOutput,
  annotations: STOPS_WORK,
  requires: "orchestration:operate",
  handle: (input, { scope, services, signal }) => services.changeSets.discard(callerFromScope(scope), input, signal),
});
