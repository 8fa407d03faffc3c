import { ReadChangesInput, ReadChangesOutput } from "../../../contract/read-changes.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { defineTool, READ_ONLY } from "../tool-definition.js";

export const readChangesTool = defineTool({
  name: "read_changes",
  title: "Read a child's changes",
  description:
    'Reads the change set of a thread that works in its own workspace (delegate_task or create_threads with workspace "worktree"): the files it changed, its commits and the diff against the commit it started from, a page at a time (offset = nextOffset reads on; a page stays under maxChars, default 30000). path limits the diff to one file. Work a run left is committed when the run ends.',
  input: ReadChangesInput,
  output: ReadChangesOutput,
  annotations: READ_ONLY,
  requires: "orchestration:read",
  handle: (input, { scope, services }) => services.changeSets.read(callerFromScope(scope), input),
});
