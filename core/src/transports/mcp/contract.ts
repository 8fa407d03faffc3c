import { z } from "zod";
import { INTERACTION_MODES, RUNTIME_MODES } from "../../spec/index.js";

/**
 * Shared pieces of the orchestration tool contract (seed 000). Field names, enums and failure
 * codes follow the seed exactly.
 */

export const RuntimeModeInput = z.enum(["inherit", ...RUNTIME_MODES]);
export const InteractionModeInput = z.enum(["inherit", ...INTERACTION_MODES]);
export const RuntimeModeOutput = z.enum(RUNTIME_MODES);
export const InteractionModeOutput = z.enum(INTERACTION_MODES);

export const Target = z
  .object({
    providerInstanceId: z.string().min(1).optional().describe("An exact provider instance; fails when unavailable."),
    driverKind: z.string().min(1).optional().describe("A driver (codex, pi, …); the parent's instance if it matches, else an available instance of it."),
    model: z.string().min(1).optional().describe("A model the provider advertises; omitted inherits or uses the provider's default model (else the first it lists)."),
    effort: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe("A reasoning effort the model lists (orchestrator_capabilities models[].efforts); another is refused naming the supported ones. Omitted inherits with the model, else the provider's default."),
  })
  .strict();

export const ClientRequestId = z
  .string()
  .min(1)
  .max(200)
  .describe("Retry key: the same key returns the same durable work. Use a new key for new work.");

export const RunStatus = z.enum(["queued", "starting", "running", "waiting", "completed", "failed", "cancelled", "interrupted"]);

export const LinkedPullRequest = z.object({ url: z.string(), number: z.number().nullable(), linkedAt: z.string() }).nullable();

export const ThreadShell = z
  .object({
    threadId: z.string(),
    link: z.string(),
    title: z.string(),
    projectId: z.string(),
    providerInstanceId: z.string(),
    model: z.string().nullable(),
    effort: z.string().nullable(),
    runtimeMode: RuntimeModeOutput,
    interactionMode: InteractionModeOutput,
    status: z.union([RunStatus, z.literal("idle")]),
    latestRunId: z.string().nullable(),
    queuedRuns: z.number(),
    relationship: z.enum(["root", "subagent", "fork", "attached"]).describe("attached: the thread of an agent session outside Switchyard (a harness wired with switchyard connect); no turn runs in it here."),
    parentThreadId: z.string().nullable(),
    delegatedTaskId: z.string().nullable(),
    reportBack: z.boolean(),
    branch: z.string().nullable(),
    worktreePath: z.string().nullable(),
    cwd: z.string(),
    linkedPullRequest: LinkedPullRequest,
    titleRegenerationPending: z.boolean(),
    snoozed: z.boolean(),
    snoozedUntil: z.string().nullable(),
    settled: z.boolean().describe("Settled with set_thread_settled: its work is done; a message sent to it revives it."),
    settledAt: z.string().nullable(),
    stopped: z.boolean().optional().describe("Switchyard's addition: Stop was pressed, so queued runs are held until resume (POST /threads/{id}/resume) or the next message."),
    attached: z
      .object({ client: z.object({ name: z.string(), version: z.string() }).nullable().describe("The outside client as it named itself, when it did.") })
      .optional()
      .describe("Switchyard's addition, on an attached thread only: its outside agent session."),
    blockedOnThreadWait: z.boolean(),
    pendingBackgroundTasks: z.number(),
    createdBy: z.enum(["user", "agent", "system", "provider"]),
    creationSource: z.enum(["cli", "mcp", "api", "scheduler", "system", "provider", "attached"]),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .loose();

export const RunViewSchema = z
  .object({
    runId: z.string(),
    ordinal: z.number(),
    status: RunStatus,
    summary: z.string().nullable(),
    error: z.object({ code: z.string().optional(), message: z.string() }).nullable(),
    createdAt: z.string().optional().describe("Switchyard's addition: when the run was asked for."),
    startedAt: z.string().nullable().optional().describe("Switchyard's addition: when it left the queue (null while queued)."),
    endedAt: z.string().nullable().optional().describe("Switchyard's addition: when it ended (null while it runs)."),
  })
  .loose();

/** Switchyard's addition: usage of a set of turns (see `UsageTotals`). */
export const UsageTotalsSchema = z.object({
  status: z
    .enum(["reported", "partial", "unknown", "none"])
    .describe("reported: every ended turn reported usage; partial: some did not (turns.unknown); unknown: none did (tokens null); none: no turn ended yet."),
  turns: z.object({ ended: z.number(), reported: z.number(), unknown: z.number(), inFlight: z.number() }),
  tokens: z
    .object({ input: z.number(), output: z.number(), cacheRead: z.number(), cacheWrite: z.number(), reasoning: z.number(), total: z.number() })
    .nullable()
    .describe("Sums over the turns that reported usage; total = input + cacheRead + cacheWrite + output (reasoning is part of output)."),
  cost: z.object({
    usd: z.number().nullable().describe("Reported plus estimated US dollars; null when nothing could be priced."),
    basis: z.enum(["reported", "estimated", "partial", "unpriced", "none"]).describe("estimated: some of it comes from the price table; partial: some turns could not be priced."),
    reportedUsd: z.number(),
    estimatedUsd: z.number(),
    unpricedTurns: z.number(),
  }),
});

/** A thread's own usage and its whole tree's. */
export const TreeUsageSchema = z.object({
  own: UsageTotalsSchema,
  subtree: UsageTotalsSchema.describe("This thread and every thread below it (children, grandchildren, across providers)."),
});

const BudgetLimitsSchema = z.object({ tokens: z.number().nullable(), costUsd: z.number().nullable(), wallClockMs: z.number().nullable() });

/** A budget on a delegation tree: limits, use and what is left. */
export const BudgetViewSchema = z.object({
  scope: z.enum(["delegated_task", "root_thread"]),
  budgetId: z.string(),
  threadId: z.string(),
  taskId: z.string().nullable(),
  limits: BudgetLimitsSchema,
  used: z.object({ tokens: z.number(), costUsd: z.number(), wallClockMs: z.number().nullable() }),
  remaining: BudgetLimitsSchema,
  origin: z.enum(["delegate_task", "config", "delegate_task_and_config"]),
  exceeded: z.object({ limit: z.enum(["tokens", "costUsd", "wallClockMs"]), used: z.number(), allowed: z.number(), at: z.string() }).nullable(),
});

/** Why a budget stopped a task. */
export const BudgetStopSchema = z.object({
  budgetId: z.string(),
  scope: z.enum(["delegated_task", "root_thread"]),
  limit: z.enum(["tokens", "costUsd", "wallClockMs"]),
  used: z.number(),
  allowed: z.number(),
  at: z.string(),
  taskId: z.string().nullable(),
});

const WorkspaceStrategyInput = z.enum(["shared", "worktree", "scratch", "existing"]);

/** Switchyard's addition: where new work runs (delegate_task, create_threads entries). */
export const WorkspaceInput = z
  .union([
    WorkspaceStrategyInput,
    z
      .object({
        strategy: WorkspaceStrategyInput,
        baseRef: z.string().min(1).max(250).optional().describe("worktree: the branch or commit to start from (default: your current commit)."),
        branch: z.string().min(1).max(250).optional().describe("worktree: the new branch's name (default switchyard/<title>-<tag>)."),
        path: z.string().min(1).max(4096).optional().describe("existing: the worktree to work in."),
      })
      .strict(),
  ])
  .describe(
    'Where it works: "shared" (your workspace; the default unless the project sets another), "worktree" (a new git worktree on a new branch from your current commit, or baseRef), "scratch" (an empty folder), "existing" (the worktree at path). A worktree\'s changes come back with read_changes / apply_changes / discard_changes; orchestrator_capabilities lists what each project supports.',
  );

const WorkspaceOutcomeSchema = z.object({
  action: z.enum(["apply", "discard", "keep"]),
  outcome: z.enum(["applied", "conflict", "nothing_to_apply", "failed", "discarded", "kept"]),
  method: z.enum(["merge", "cherry-pick"]).nullable(),
  commit: z.string().nullable(),
  files: z.array(z.string()).readonly().describe("conflict: the files that conflict (nothing was changed)."),
  message: z.string().nullable(),
  requestId: z.string(),
  at: z.string(),
});

/** Switchyard's addition: a thread's own workspace and its change set, as last recorded. */
export const WorkspaceViewSchema = z.object({
  workspaceId: z.string(),
  strategy: z.enum(["worktree", "scratch", "existing"]),
  status: z.enum(["creating", "ready", "failed", "removed"]),
  path: z.string(),
  branch: z.string().nullable(),
  baseCommit: z.string().nullable(),
  targetThreadId: z.string().nullable().describe("The thread its changes go back to (null: the project folder, for a client)."),
  targetPath: z.string(),
  hasChanges: z.boolean().nullable().describe("Whether it holds changes against its base, as recorded when its last run ended (null: not known yet, or a scratch folder)."),
  changes: z
    .object({ head: z.string().nullable(), commits: z.number(), files: z.array(z.string()).readonly(), fileCount: z.number(), insertions: z.number(), deletions: z.number(), recordedAt: z.string() })
    .nullable(),
  disposition: z.enum(["applied", "discarded", "kept"]).nullable(),
  pending: z.enum(["apply", "removal"]).nullable(),
  lastOutcome: WorkspaceOutcomeSchema.nullable(),
  error: z.string().nullable(),
});

/** apply_changes / discard_changes result. */
export const ChangeSetDecisionSchema = z.object({
  threadId: z.string(),
  requestId: z.string(),
  replayed: z.boolean(),
  outcome: WorkspaceOutcomeSchema.nullable().describe("What came of it; null while still under way (pending)."),
  pending: z.boolean().describe("The wait ended first; read_changes shows the outcome once it is there."),
  workspace: WorkspaceViewSchema,
});

export const DelegateTaskResultSchema = z.object({
  taskId: z.string(),
  childThreadId: z.string(),
  childThreadLink: z.string(),
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
    .object({ requestId: z.string(), kind: z.enum(["command", "file-read", "file-change", "mcp-elicitation", "permission"]), runId: z.string() })
    .nullable(),
  waitTimedOut: z.boolean(),
  usage: TreeUsageSchema.optional().describe("Switchyard: the child thread's own usage and its whole tree's, updated as each turn ends."),
  budget: BudgetViewSchema.nullable().optional().describe("Switchyard: the task's own budget (tokens, costUsd, wallClockMs), what its tree used and what is left."),
  budgetStop: BudgetStopSchema.nullable()
    .optional()
    .describe("Switchyard: set when a budget (the task's own or one above it) stopped the task; its result is partial."),
  changes: WorkspaceViewSchema.nullable()
    .optional()
    .describe("Switchyard: the child's own workspace (workspace worktree/scratch/existing) and whether it holds changes; null: it shares yours. read_changes shows the diff."),
});

export const MetadataResult = z.object({
  commandId: z.string(),
  sequence: z.number().nullable(),
  replayed: z.boolean(),
  threadId: z.string(),
  title: z.string(),
  titleRegenerationPending: z.boolean(),
  linkedPullRequest: LinkedPullRequest,
});
