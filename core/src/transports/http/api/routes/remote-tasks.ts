import { ListRemoteTasksOutput } from "../../../../contract/list-remote-tasks.js";
import { REMOTE_STATUS_TIMEOUT_MS } from "../../../../services/reach/remote-children.js";
import { defineRoute } from "../api-route.js";
import { ThreadPath } from "./threads.js";

export const listRemoteTasksRoute = defineRoute({
  method: "GET",
  path: "/threads/{threadId}/remote-tasks",
  operationId: "listRemoteTasks",
  summary: "A thread's children in linked environments",
  description: `The tasks a thread delegated to linked environments (delegate_task with environmentId), oldest first: the environment's name here and its id, the task and child thread ids there and the child's switchyard-thread link, with status, provider, model and summary. A finished task is read from its receipt here; an unfinished one asks the other environment (task_status, at most ${REMOTE_STATUS_TIMEOUT_MS} ms each) and is listed as unreachable, with why, when it does not answer. Reading does not acknowledge a result for the parent.`,
  tag: "tasks",
  requires: "orchestration:read",
  params: ThreadPath,
  input: ThreadPath,
  output: ListRemoteTasksOutput,
  outputName: "RemoteTasks",
  handle: async (input, { caller, services }) => ({
    remoteTasks: await services.remoteChildren.ofThread(caller, input.threadId),
  }),
});
