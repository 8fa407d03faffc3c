import { applyThreadUpdate, ThreadUpdateInput, ThreadUpdateOutput } from "../../../contract/thread-update.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { CHANGES_STATE, defineTool } from "../tool-definition.js";

export const threadUpdateTool = defineTool({
  name: "t3_thread_update",
  title: "Update thread metadata",
  description:
    'Updates a thread\'s metadata (yours when threadId is omitted). action "rename" requires title; "regenerate_title" rejects one. Reusing a clientRequestId for the same action and thread replays the same receipt. Pull requests use link_pull_request / unlink_pull_request.',
  input: ThreadUpdateInput,
  output: ThreadUpdateOutput,
  annotations: CHANGES_STATE,
  requires: "orchestration:operate",
  handle: async (input, { scope, services }) => applyThreadUpdate(services.metadata, callerFromScope(scope), input),
});
