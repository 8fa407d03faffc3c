import { z } from "zod";
import { callerFromScope } from "../caller-from-scope.js";
import { defineTool, STOPS_WORK } from "../tool-definition.js";

export const deleteScheduledTaskTool = defineTool({
  name: "delete_scheduled_task",
  title: "Delete a scheduled task",
  description:
    "Deletes a scheduled task permanently: it never fires again and its webhook URL answers 404. A run it already started goes on. To stop it for a while instead, use schedule_task with scheduledTaskId and enabled: false.",
  input: z.object({ scheduledTaskId: z.string().min(1).max(200) }).strict(),
  output: z.object({ scheduledTaskId: z.string(), title: z.string(), deleted: z.literal(true), replayed: z.boolean() }),
  annotations: STOPS_WORK,
  requires: "orchestration:operate",
  handle: async (input, { scope, services }) => services.schedules.delete(callerFromScope(scope), input),
});
