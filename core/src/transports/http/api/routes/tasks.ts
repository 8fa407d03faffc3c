import { z } from "zod";
import { TaskCancelInput, TaskCancelOutput } from "../../../../contract/task-cancel.js";
import { TaskStatusInput, TaskStatusOutput } from "../../../../contract/task-status.js";
import { defineRoute } from "../api-route.js";

const TaskPath = z.object({ taskId: z.string().min(1) }).strict();

export const getTaskRoute = defineRoute({
  method: "GET",
  path: "/tasks/{taskId}",
  operationId: "getTask",
  summary: "Read a delegated task",
  description:
    "task_status: a task an agent delegated (a thread's delegatedTaskId), from durable state. workState tells active work, a finished turn waiting on its own children, and an available result. Reading it does not acknowledge the result for the parent: the parent still gets it.",
  tag: "tasks",
  requires: "orchestration:read",
  params: TaskPath,
  input: TaskStatusInput,
  output: TaskStatusOutput,
  outputName: "DelegatedTask",
  handle: (input, { caller, services }) => services.tasks.status(caller, input.taskId),
});

export const cancelTaskRoute = defineRoute({
  method: "POST",
  path: "/tasks/{taskId}/cancel",
  operationId: "cancelTask",
  summary: "Cancel a delegated task",
  description:
    "task_cancel: stops the tasks the child delegated, then the child thread, cancels the task's own queued turn and disposes automatic delivery to the parent. A finished task keeps its published result.",
  tag: "tasks",
  requires: "orchestration:operate",
  params: TaskPath,
  body: TaskCancelInput.omit({ taskId: true }),
  input: TaskCancelInput,
  output: TaskCancelOutput,
  outputName: "CancelledTask",
  handle: (input, { caller, services }) => services.tasks.cancel(caller, input.taskId, input.reason),
});
