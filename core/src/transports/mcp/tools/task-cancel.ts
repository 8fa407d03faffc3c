import { TaskCancelInput, TaskCancelOutput } from "../../../contract/task-cancel.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { linkedGrantOf } from "../linked-caller.js";
import { defineTool, STOPS_WORK } from "../tool-definition.js";

export const taskCancelTool = defineTool({
  name: "task_cancel",
  title: "Cancel a delegated task",
  description:
    "Stops a task you delegated: first every task the child delegated, then the child thread (its running turn is interrupted, queued turns are held), cancels the task's own queued turn and disposes automatic delivery to you. A finished task keeps its published result.",
  input: TaskCancelInput,
  output: TaskCancelOutput,
  annotations: STOPS_WORK,
  requires: "orchestration:operate",
  handle: async (input, { scope, services }) => {
    const grant = linkedGrantOf(scope);
    if (grant !== null) return services.foreignTasks.cancel(grant, input.taskId, input.reason);
    return services.tasks.cancel(callerFromScope(scope), input.taskId, input.reason);
  },
});
