import { z } from "zod";

/** listRemoteTasks (HTTP API): a thread's children in linked environments. */
export const RemoteChildSchema = z.object({
  environment: z.string().describe("The link's name here: the environment the child runs in."),
  environmentId: z.string().describe("That environment's own id (the one in its switchyard-thread links)."),
  taskId: z.string().describe("The task's id there (task_status and task_cancel take it here too)."),
  childThreadId: z.string().describe("The child thread's id there; it is not a thread of this environment."),
  childThreadLink: z
    .string()
    .describe("switchyard-thread://v2/<environmentId>/<childThreadId>, as the other environment built it."),
  childThreadWebUrl: z
    .string()
    .optional()
    .describe("The child's page in the other environment's web UI, when it sent one; never built here."),
  title: z.string(),
  status: z
    .enum(["queued", "running", "waiting", "completed", "failed", "cancelled", "interrupted", "unreachable"])
    .describe(
      "The task's status; unreachable when its result has not arrived here and the other environment did not answer (problem says why).",
    ),
  statusFrom: z
    .enum(["receipt", "environment", "none"])
    .describe("receipt: the result received here; environment: the other side's task_status now; none: neither."),
  workState: z.enum(["working", "waiting_for_children", "result_available"]).nullable(),
  providerInstanceId: z.string().nullable().describe("The child's provider there, when known."),
  model: z.string().nullable(),
  summary: z.string().nullable().describe("The published result (the child's last reply) once it finished."),
  createdAt: z.string(),
  finishedAt: z.string().nullable().describe("When the result arrived here."),
  problem: z.object({ code: z.string(), reason: z.string(), message: z.string() }).nullable(),
});

export const ListRemoteTasksOutput = z.object({ remoteTasks: z.array(RemoteChildSchema) });
