import { z } from "zod";
import { DeleteScheduledTaskInput, DeleteScheduledTaskOutput } from "../../../../contract/delete-scheduled-task.js";
import { ListScheduledTasksInput, ListScheduledTasksOutput } from "../../../../contract/list-scheduled-tasks.js";
import { ScheduleTaskInput, ScheduleTaskOutput } from "../../../../contract/schedule-task.js";
import { ScheduledTaskSchema } from "../../../../contract/scheduled-task.js";
import { defineRoute } from "../api-route.js";

const ScheduledTaskPath = z.object({ scheduledTaskId: z.string().min(1).max(200) }).strict();

export const listScheduledTasksRoute = defineRoute({
  method: "GET",
  path: "/scheduled-tasks",
  operationId: "listScheduledTasks",
  summary: "List scheduled tasks, newest first",
  description:
    "list_scheduled_tasks: one project's tasks with projectId, else every project the token may use. Each shows its trigger, whether it is enabled (pausedReason says why not), the credential it runs under (authority), where its runs go, its next run, its webhook URL and its recent triggers (runs started, or why a trigger was skipped). Never a webhook secret; an unsigned webhook's URL, its credential, only to a token that may change the task (webhookUrlHidden otherwise).",
  tag: "scheduled-tasks",
  requires: "orchestration:read",
  query: ListScheduledTasksInput,
  input: ListScheduledTasksInput,
  output: ListScheduledTasksOutput,
  outputName: "ScheduledTaskList",
  handle: async (input, { caller, services }) => await services.schedules.list(caller, input),
});

export const createScheduledTaskRoute = defineRoute({
  method: "POST",
  path: "/scheduled-tasks",
  operationId: "createScheduledTask",
  summary: "Schedule a task",
  description:
    "schedule_task without scheduledTaskId: a prompt that runs on an interval, at a fixed time in the server's local time zone (cron, or once with at), or on each qualifying request to its webhook URL, even when no turn is active. projectId is required (a token has no thread). Modes omitted are the token's ceiling, stepped down to what the provider offers; nothing broader is accepted. The task runs under this token: revoking it (switchyard token revoke) or its expiry pauses the task. Without a signature, anyone with the webhook URL can trigger a run; a generated secret is shown once, in signatureSecret. Idempotency-Key (or clientRequestId) makes a retry return the same task.",
  tag: "scheduled-tasks",
  requires: "orchestration:operate",
  body: ScheduleTaskInput.omit({ scheduledTaskId: true }),
  idempotencyKey: "clientRequestId",
  input: ScheduleTaskInput.omit({ scheduledTaskId: true }),
  output: ScheduleTaskOutput,
  outputName: "ScheduledTaskChange",
  status: 201,
  handle: async (input, { caller, services }) => await services.schedules.schedule(caller, input),
});

export const readScheduledTaskRoute = defineRoute({
  method: "GET",
  path: "/scheduled-tasks/{scheduledTaskId}",
  operationId: "readScheduledTask",
  summary: "Read a scheduled task and its recent triggers",
  tag: "scheduled-tasks",
  requires: "orchestration:read",
  params: ScheduledTaskPath,
  input: ScheduledTaskPath,
  output: ScheduledTaskSchema,
  outputName: "ScheduledTask",
  handle: async (input, { caller, services }) => await services.schedules.read(caller, input.scheduledTaskId),
});

export const updateScheduledTaskRoute = defineRoute({
  method: "POST",
  path: "/scheduled-tasks/{scheduledTaskId}",
  operationId: "updateScheduledTask",
  summary: "Update, pause or resume a scheduled task",
  description:
    'schedule_task with scheduledTaskId: omitted fields stay. {"enabled": false} pauses the task (its triggers are recorded as skipped), {"enabled": true} resumes it, counting its occurrences from now, also one Switchyard paused because its credential lapsed, and binds it to this token. A task\'s project cannot change. All or nothing: a bad field changes nothing.',
  tag: "scheduled-tasks",
  requires: "orchestration:operate",
  params: ScheduledTaskPath,
  body: ScheduleTaskInput.omit({ scheduledTaskId: true, projectId: true }),
  idempotencyKey: "clientRequestId",
  input: ScheduleTaskInput.omit({ projectId: true }).required({ scheduledTaskId: true }),
  output: ScheduleTaskOutput,
  outputName: "ScheduledTaskChange",
  handle: async (input, { caller, services }) => await services.schedules.schedule(caller, input),
});

export const deleteScheduledTaskRoute = defineRoute({
  method: "POST",
  path: "/scheduled-tasks/{scheduledTaskId}/delete",
  operationId: "deleteScheduledTask",
  summary: "Delete a scheduled task permanently",
  description:
    "delete_scheduled_task: the task never fires again and its webhook URL answers 404; a run it already started goes on. To stop it for a while, pause it instead (updateScheduledTask with enabled: false).",
  tag: "scheduled-tasks",
  requires: "orchestration:operate",
  params: ScheduledTaskPath,
  input: DeleteScheduledTaskInput,
  output: DeleteScheduledTaskOutput,
  outputName: "DeletedScheduledTask",
  handle: (input, { caller, services }) => services.schedules.delete(caller, input),
});
