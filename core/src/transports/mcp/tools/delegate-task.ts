import { z } from "zod";
import { callerFromScope } from "../caller-from-scope.js";
import { linkedGrantOf, reachMetaOf } from "../linked-caller.js";
import { ClientRequestId, DelegateTaskResultSchema, InteractionModeInput, RuntimeModeInput, Target, WorkspaceInput } from "../contract.js";
import { CREATES_WORK, defineTool } from "../tool-definition.js";

export const delegateTaskTool = defineTool({
  name: "delegate_task",
  title: "Delegate a task",
  description: [
    "Creates a sub-agent thread on any available provider and sends it the task. The child gets ONLY the task text (plus the optional role instruction), not this conversation: make the task self-contained.",
    'mode "wait" returns when the result is ready, when the child asks a blocking question (hasPendingQuestion: answer with t3_pending_request), when it waits for an approval of its own work (pendingApproval), or when the wait cap passes (waitTimedOut: the task keeps running; call task_status or wait again). mode "async" (default) returns at once.',
    "Provider, model and modes inherit from you when omitted; a child never gets broader modes than yours. Use a distinct clientRequestId per task, stable across retries of that task.",
    "For a follow-up in the same child conversation use t3_thread_send on childThreadId.",
    "budget (optional) caps the task's tree in tokens, dollars or wall-clock time; usage shows what the tree used so far.",
    'workspace "worktree" gives the child its own git worktree (several children editing files never overwrite each other); take its changes back with apply_changes or drop them with discard_changes.',
  ].join(" "),
  input: z
    .object({
      task: z.string().min(1).max(200_000),
      target: Target.optional(),
      projectId: z.string().min(1).optional().describe("Run the child in this project's root (orchestrator_capabilities lists the projects you may use); default your own project and workspace."),
      title: z.string().min(1).max(200).optional(),
      role: z.enum(["implementation", "research", "review", "design", "test", "general"]).optional(),
      mode: z.enum(["async", "wait"]).optional(),
      timeoutMs: z.number().int().min(0).max(3_600_000).optional().describe("How long a wait may block; capped by the server's maximum wait."),
      clientRequestId: ClientRequestId.optional(),
      runtimeMode: RuntimeModeInput.optional(),
      interactionMode: InteractionModeInput.optional(),
      workspace: WorkspaceInput.optional(),
      budget: z
        .object({
          tokens: z.number().int().positive().optional().describe("Tokens (input, cache, output) the task's whole tree may use."),
          costUsd: z.number().positive().optional().describe("US dollars (reported or estimated) the task's whole tree may cost."),
          wallClockMs: z.number().int().min(1_000).max(604_800_000).optional().describe("How long the task may run until its result is published."),
        })
        .strict()
        .optional()
        .describe(
          "Limits on the task's whole tree (it and everything it delegates). Each must fit in what is left of the budgets above you (orchestrator_capabilities lists them). When one is reached the tree gets no new children, its running turns are interrupted, and the task finishes with its partial result and budgetStop set.",
        ),
    })
    .strict(),
  output: DelegateTaskResultSchema,
  annotations: CREATES_WORK,
  requires: "orchestration:operate",
  handle: (input, { scope, services, signal, reportProgress, meta }) => {
    // From a linked environment: the child's parent is there (a foreign lineage).
    const grant = linkedGrantOf(scope);
    if (grant !== null) return services.foreignTasks.delegate(grant, reachMetaOf(meta), input, signal);
    return services.tasks.delegate(callerFromScope(scope), input, { signal, onProgress: (message) => void reportProgress(message) });
  },
});
