import { ThreadReadInput, ThreadReadOutput } from "../../../contract/thread-read.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { defineTool, READ_ONLY } from "../tool-definition.js";

export const threadReadTool = defineTool({
  name: "t3_thread_read",
  title: "Read a thread",
  description:
    'Reads a thread\'s state, recent runs and timeline. view "messages" (default) returns user and assistant messages and proposed plans; "activity" adds summarized tool calls, reasoning, sub-agents and requests. Without a cursor an agent gets the newest items (older: beforePosition=earlierPosition); afterPosition=-1 starts at the oldest, afterPosition=nextPosition reads newer ones. Results stop near maxChars (default 30000); item text is bounded and flagged truncated.',
  input: ThreadReadInput,
  output: ThreadReadOutput,
  annotations: READ_ONLY,
  requires: "orchestration:read",
  handle: async (input, { scope, services }) => await services.queries.read(callerFromScope(scope), input),
});
