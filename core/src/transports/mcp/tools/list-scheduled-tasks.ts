import { z } from "zod";
import { callerFromScope } from "../caller-from-scope.js";
import { ScheduledTaskSchema } from "../scheduled-task-contract.js";
import { defineTool, READ_ONLY } from "../tool-definition.js";

export const listScheduledTasksTool = defineTool({
  name: "list_scheduled_tasks",
  title: "List scheduled tasks",
  description:
    "Lists scheduled tasks, newest first: projectId when given, else your thread's project (a caller outside a thread sees every project). Each shows its trigger, whether it is enabled (or why it is paused), the credential it runs under, where its runs go, when it runs next, its webhook URL (an unsigned one only when you may change the task), and its recent triggers with the runs they started or why they were skipped.",
  input: z
    .object({
      projectId: z.string().min(1).optional(),
      limit: z.number().int().min(1).max(100).optional(),
      offset: z.number().int().min(0).optional(),
    })
    .strict(),
  output: z.object({ tasks: z.array(ScheduledTaskSchema), total: z.number(), offset: z.number(), limit: z.number(), hasMore: z.boolean() }),
  annotations: READ_ONLY,
  requires: "orchestration:read",
  handle: async (input, { scope, services }) => services.schedules.list(callerFromScope(scope), input),
});
