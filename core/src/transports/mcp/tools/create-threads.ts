import { createThreadsAnswer, CreateThreadsInput, CreateThreadsOutput } from "../../../contract/create-threads.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { CREATES_WORK, defineTool } from "../tool-definition.js";

export const createThreadsTool = defineTool({
  name: "create_threads",
  title: "Create threads",
  description:
    "Creates 1 to 20 threads: ordinary top-level threads, or with parentThreadId children of an existing thread whose finished turns are delivered to that parent as messages. Each entry resolves provider, model and modes on its own; threads inherit your project, branch and worktree (or projectId's root; a child its parent's). Entries with a prompt start working at once; entries without one stay idle.",
  input: CreateThreadsInput,
  output: CreateThreadsOutput,
  annotations: CREATES_WORK,
  requires: "orchestration:operate",
  handle: async (input, { scope, services }) =>
    createThreadsAnswer(await services.threads.createThreads(callerFromScope(scope), input), services.queries),
});
