import { z } from "zod";
import { NativeSubagentSchema } from "./native-subagent.js";
import { BudgetStopSchema, BudgetViewSchema, TreeUsageSchema } from "./usage.js";
import { WorkspaceViewSchema } from "./workspace.js";

/** A delegated task as delegate_task, task_status and task_cancel answer it. */
export const DelegateTaskResultSchema = z.object({
  taskId: z.string(),
  childThreadId: z.string(),
  childThreadLink: z.string(),
  childThreadWebUrl: z
    .string()
    .optional()
    .describe(
      "The child thread's page in the web UI of the environment that runs it, for clients that cannot open switchyard-thread:// links; absent when that environment knows no web UI address.",
    ),
  childRunId: z.string().nullable(),
  childNodeId: z.string(),
  status: z.enum(["queued", "running", "waiting", "completed", "failed", "cancelled", "interrupted"]),
  workState: z.enum(["working", "waiting_for_children", "result_available"]),
  hasPendingChildRuns: z.boolean(),
  providerInstanceId: z.string(),
  model: z.string().nullable(),
  summary: z.string().nullable(),
  resultContextTransferId: z.string().nullable(),
  latestTerminalRunId: z.string().nullable(),
  latestTerminalStatus: z.enum(["completed", "failed", "cancelled", "interrupted"]).nullable(),
  latestTerminalSummary: z.string().nullable(),
  latestTerminalResultContextTransferId: z.string().nullable(),
  hasPendingQuestion: z.boolean(),
  pendingApproval: z
    .object({
      requestId: z.string(),
      kind: z.enum(["command", "file-read", "file-change", "mcp-elicitation", "permission"]),
      runId: z.string(),
    })
    .nullable(),
  waitTimedOut: z.boolean(),
  usage: TreeUsageSchema.optional().describe(
    "Switchyard: the child thread's own usage and its whole tree's, updated as each turn ends.",
  ),
  nativeSubagents: z
    .array(NativeSubagentSchema)
    .optional()
    .describe(
      "Switchyard: the provider's own sub-agents the child thread's turns spawned (the newest 20), each under its runId; observed, never orchestrator-owned, and their usage already in usage. Absent when there are none.",
    ),
  budget: BudgetViewSchema.nullable()
    .optional()
    .describe("Switchyard: the task's own budget (tokens, costUsd, wallClockMs), what its tree used and what is left."),
  budgetStop: BudgetStopSchema.nullable()
    .optional()
    .describe(
      "Switchyard: set when a budget (the task's own or one above it) stopped the task; its result is partial.",
    ),
  changes: WorkspaceViewSchema.nullable()
    .optional()
    .describe(
      "Switchyard: the child's own workspace (workspace worktree/scratch/existing) and whether it holds changes; null: it shares yours. read_changes shows the diff.",
    ),
});
