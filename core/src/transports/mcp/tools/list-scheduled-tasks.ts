import { ListScheduledTasksInput, ListScheduledTasksOutput } from "../../../contract/list-scheduled-tasks.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { defineTool, READ_ONLY } from "../tool-definition.js";

export const listScheduledTasksTool = defineTool({
  name: "list_scheduled_tasks",
  title: "List scheduled tasks",
  description:
    "Lists scheduled tasks, newest first: projectId when given, else your thread's project (a caller outside a thread sees every project). Each shows its trigger, whether it is enabled (or why it is paused), the credential it runs under, where its runs go, when it runs next, its webhook URL (an unsigned one only when you may change the task), and its recent triggers with the runs they started or why they were skipped.",
  input: ListScheduledTasksInput,
  output: ListScheduledTasksOutput,
  annotations: READ_ONLY,
  requires: "orchestration:read",
  handle: async (input, { scope, services }) => await services.schedules.list(callerFromScope(scope), input),
});
