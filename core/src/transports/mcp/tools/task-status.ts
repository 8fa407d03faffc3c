import { TaskStatusInput, TaskStatusOutput } from "../../../contract/task-status.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { linkedGrantOf } from "../linked-caller.js";
import { defineTool, READ_ONLY } from "../tool-definition.js";

export const taskStatusTool = defineTool({
  name: "task_status",
  title: "Delegated task status",
  description:
    "Reads a task you delegated from durable state. workState tells active work (working), a finished turn waiting for its own children (waiting_for_children) and an available result (result_available). The published summary stays stable; latestTerminal* shows later follow-ups in the child thread.",
  input: TaskStatusInput,
  output: TaskStatusOutput,
  annotations: READ_ONLY,
  requires: "orchestration:read",
  handle: async (input, { scope, services }) => {
    // A linked environment's tasks here are the ones it delegated (their parents are there).
    const grant = linkedGrantOf(scope);
    if (grant !== null) return services.foreignTasks.view(grant, input.taskId);
    return services.tasks.status(callerFromScope(scope), input.taskId);
  },
});
