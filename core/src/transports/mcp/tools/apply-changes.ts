import { ApplyChangesInput, ApplyChangesOutput } from "../../../contract/apply-changes.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { CHANGES_STATE, defineTool } from "../tool-definition.js";

export const applyChangesTool = defineTool({
  name: "apply_changes",
  title: "Apply a child's changes",
  description:
    'Applies the change set of a child that worked in its own worktree to your workspace: "merge" (default; a fast-forward when your branch has not moved) or "cherry-pick" (its commits onto your branch). The result is worked out before your files change: a conflict (with your branch, or with uncommitted changes of yours) changes nothing and lists the files. Applying again later brings only what is new. Needs your live run, runtime mode auto-accept-edits or full-access, and the child\'s run to have ended.',
  input: ApplyChangesInput,
  output: ApplyChangesOutput,
  annotations: CHANGES_STATE,
  requires: "orchestration:operate",
  handle: (input, { scope, services, signal }) => services.changeSets.apply(callerFromScope(scope), input, signal),
});
