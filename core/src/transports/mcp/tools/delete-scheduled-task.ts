import { DeleteScheduledTaskInput, DeleteScheduledTaskOutput } from "../../../contract/delete-scheduled-task.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { defineTool, STOPS_WORK } from "../tool-definition.js";

export const deleteScheduledTaskTool = defineTool({
  name: "delete_scheduled_task",
  title: "Delete a scheduled task",
  description:
    "Deletes a scheduled task permanently: it never fires again and its webhook URL answers 404. A run it already started goes on. To stop it for a while instead, use schedule_task with scheduledTaskId and enabled: false.",
  input: DeleteScheduledTaskInput,
  output: DeleteScheduledTaskOutput,
  annotations: STOPS_WORK,
  requires: "orchestration:operate",
  handle: async (input, { scope, services }) => services.schedules.delete(callerFromScope(scope), input),
});
