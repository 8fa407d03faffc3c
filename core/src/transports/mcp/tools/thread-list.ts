import { ThreadListInput, ThreadListOutput } from "../../../contract/thread-list.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { defineTool, READ_ONLY } from "../tool-definition.js";

export const threadListTool = defineTool({
  name: "t3_thread_list",
  title: "List threads",
  description:
    "Lists thread shells in one project, newest first: projectId when given, else your thread's project. Filter by title (substring), run status, snoozed, settled, and whether sub-agent threads are included. Offset-paginated; deleted threads are never listed.",
  input: ThreadListInput,
  output: ThreadListOutput,
  annotations: READ_ONLY,
  requires: "orchestration:read",
  handle: async (input, { scope, services }) => await services.queries.list(callerFromScope(scope), input),
});
