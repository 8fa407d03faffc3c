import type { NativeSubagentView } from "../native-subagents.js";
import type { ProjectionReader } from "../../engine/run-lifecycle.js";
import { isTerminalRunStatus, type DelegatedTaskRecord, type RunRecord } from "../../store/records.js";
import { derive } from "../../util/ids.js";
import type { ThreadLinks } from "../thread-links.js";
import { resultText, taskWork, type TaskWork } from "../../engine/task-work.js";
import type { BudgetStopView, BudgetView, TreeUsage } from "../usage/usage-service.js";
import type { WorkspaceView } from "../workspaces/workspace-records.js";

/** seed 000 `DelegateTaskResult`, plus links, usage and budgets (Switchyard's additions, all optional). */
export interface DelegateTaskResult {
  taskId: string;
  childThreadId: string;
  childThreadLink: string;
  /** The child thread's page in this server's web UI (Switchyard's addition), when its address is known. */
  childThreadWebUrl?: string;
  childRunId: string | null;
  childNodeId: string;
  status: "queued" | "running" | "waiting" | "completed" | "failed" | "cancelled" | "interrupted";
  workState: "working" | "waiting_for_children" | "result_available";
  hasPendingChildRuns: boolean;
  providerInstanceId: string;
  model: string | null;
  summary: string | null;
  resultContextTransferId: string | null;
  latestTerminalRunId: string | null;
  latestTerminalStatus: "completed" | "failed" | "cancelled" | "interrupted" | null;
  latestTerminalSummary: string | null;
  latestTerminalResultContextTransferId: string | null;
  hasPendingQuestion: boolean;
  pendingApproval: {
    requestId: string;
    kind: "command" | "file-read" | "file-change" | "mcp-elicitation" | "permission";
    runId: string;
  } | null;
  waitTimedOut: boolean;
  /** The child thread's own usage and its whole tree's (live: each turn adds its usage when it ends). */
  usage?: TreeUsage;
  /** The provider-native sub-agents the child's turns spawned (observed; their usage is in `usage` already). */
  nativeSubagents?: NativeSubagentView[];
  /** The task's own budget, or null when it has none. */
  budget?: BudgetView | null;
  /** The budget that stopped the task (its own or one above it), or null. */
  budgetStop?: BudgetStopView | null;
  /** The child's own workspace and its change set (null: it shares its parent's workspace). */
  changes?: WorkspaceView | null;
}

/**
 * The public status. Once finalized it is the published status. Before, it stays nonterminal
 * while known work remains: `queued` until the original run starts, `waiting` while a run of the
 * task is blocked on an answer or approval, else `running` (also while the child's finished turn
 * waits on nested tasks or follow-up turns; `workState` then says `waiting_for_children`).
 */
function publicStatus(task: DelegatedTaskRecord, work: TaskWork): DelegateTaskResult["status"] {
  if (task.finalizedAt !== null) return task.status === "starting" ? "running" : task.status;
  if (work.original !== null && work.original.status === "queued") return "queued";
  return work.active?.status === "waiting" ? "waiting" : "running";
}

/** The result a later run left: the follow-up's own transfer, or the task's for its final work turn. */
async function laterResult(
  reader: ProjectionReader,
  task: DelegatedTaskRecord,
  run: RunRecord,
): Promise<{ summary: string | null; transferId: string | null }> {
  if (task.resultRunId === run.id && task.resultContextTransferId !== null)
    return { summary: task.summary, transferId: task.resultContextTransferId };
  const transfer = await reader.get("contextTransfer", derive.followUpResultTransfer(task.id, run.id));
  if (transfer !== null) return { summary: transfer.content, transferId: transfer.id };
  const text = resultText(run.summary?.trim() ?? "", run.error, run.status);
  return { summary: text === "" ? null : text, transferId: null };
}

function webUrlOf(links: Pick<ThreadLinks, "webUrl">, threadId: string): { childThreadWebUrl?: string } {
  const url = links.webUrl(threadId);
  return url === undefined ? {} : { childThreadWebUrl: url };
}

/** Builds the durable view of a task from the projections. */
export async function taskView(
  reader: ProjectionReader,
  task: DelegatedTaskRecord,
  links: Pick<ThreadLinks, "link" | "webUrl">,
  waitTimedOut = false,
): Promise<DelegateTaskResult> {
  const work = await taskWork(reader, task);
  const finalized = task.finalizedAt !== null;
  const workState: DelegateTaskResult["workState"] = finalized
    ? "result_available"
    : work.active !== null || work.original === null || !isTerminalRunStatus(work.original.status)
      ? "working"
      : "waiting_for_children";
  // Later turns of the child thread, whatever started them: follow-ups of the task's own work,
  // nested results, and explicit sends after the task finished.
  const originalOrdinal = work.original?.ordinal ?? 0;
  const later = (await reader.select("run", "thread_id = ?", [task.childThreadId], "ORDER BY ordinal")).filter(
    (run) => run.ordinal > originalOrdinal,
  );
  const latestTerminal =
    [...later].reverse().find((run) => isTerminalRunStatus(run.status) && run.startedAt !== null) ?? null;
  const latestResult = latestTerminal === null ? null : await laterResult(reader, task, latestTerminal);
  const pending = await reader.select("runtimeRequest", "thread_id = ? AND status = 'pending'", [task.childThreadId]);
  const ownRuns = new Set(work.runs.filter((run) => !isTerminalRunStatus(run.status)).map((run) => run.id));
  const approval = finalized
    ? null
    : (pending.find((request) => request.kind === "approval" && ownRuns.has(request.runId)) ?? null);
  return {
    taskId: task.id,
    childThreadId: task.childThreadId,
    childThreadLink: links.link(task.childThreadId),
    ...webUrlOf(links, task.childThreadId),
    childRunId: task.childRunId,
    childNodeId: task.childNodeId,
    status: publicStatus(task, work),
    workState,
    hasPendingChildRuns: later.some((run) => !isTerminalRunStatus(run.status)),
    providerInstanceId: task.providerInstanceId,
    model: task.model,
    summary: finalized ? task.summary : null,
    resultContextTransferId: finalized ? task.resultContextTransferId : null,
    latestTerminalRunId: latestTerminal?.id ?? null,
    latestTerminalStatus:
      latestTerminal === null ? null : (latestTerminal.status as DelegateTaskResult["latestTerminalStatus"]),
    latestTerminalSummary: latestResult?.summary ?? null,
    latestTerminalResultContextTransferId: latestResult?.transferId ?? null,
    hasPendingQuestion: pending.some((request) => request.kind === "user_input" && request.blocking),
    pendingApproval:
      approval === null
        ? null
        : { requestId: approval.id, kind: approval.approvalKind ?? "permission", runId: approval.runId },
    waitTimedOut,
  };
}
