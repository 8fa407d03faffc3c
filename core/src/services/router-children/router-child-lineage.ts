import type { BudgetConfig } from "../../config/config-schema.js";
import type { CommandContext } from "../../engine/command-context.js";
import { OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import { activeRun, putItem, type ProjectionReader } from "../../engine/run-lifecycle.js";
import type { NewThreadInput } from "../../engine/thread-records.js";
import type { ThreadRecord } from "../../store/records.js";

/**
 * Router children: threads an outside client (a planner's router, a CI job, a script) creates
 * under a parent thread with `parentThreadId`. A router child is a sub-agent thread without a
 * delegated task (`relationship: "subagent"`, `delegatedTaskId: null`), so it is shown as the
 * parent's child wherever sub-agents are (t3_thread_list `includeSubagents`, the thread shell's
 * `parentThreadId`, a `subagent` item in the parent's timeline, an event stream's
 * `descendants`). With `reportBack` (the default), each of its finished turns is delivered to
 * the parent as a message, exactly once (router-child-results.ts).
 */

/** The parent's timeline item that shows a router child. */
export const routerChildItemId = (childThreadId: string) => `item:router-child:${childThreadId}`;
/** The durable record of one finished child turn owed to the parent; its id makes delivery exactly once. */
export const childTurnTransferId = (childRunId: string) => `transfer:child-turn:${childRunId}`;
/** The message that delivers one finished child turn to the parent. */
export const childTurnMessageId = (childRunId: string) => `message:child-turn:${childRunId}`;
/** The child run a delivery message (by its id) reports, or null for any other message. */
export function childRunOfMessage(messageId: string): string | null {
  return messageId.startsWith("message:child-turn:") ? messageId.slice("message:child-turn:".length) : null;
}

/**
 * The parent a new router child hangs off, checked: it exists, lives in the child's project, and
 * the tree stays within `budgets.maxDelegationDepth`.
 */
export async function routerParent(
  reader: ProjectionReader,
  parentThreadId: string,
  projectId: string,
  budgets: BudgetConfig,
): Promise<ThreadRecord> {
  const parent = await reader.get("thread", parentThreadId);
  if (parent === null || parent.deletedAt !== null) {
    throw new OrchestratorFailure("thread_not_found", `Parent thread ${parentThreadId} does not exist.`, {
      threadId: parentThreadId,
      field: "parentThreadId",
    });
  }
  if (parent.lineage.relationship === "attached") {
    // Its children's turns would be delivered to it as messages, and no turn runs in it here.
    throw new OrchestratorFailure(
      "invalid_request",
      `Thread ${parentThreadId} is an attached thread (its agent runs outside Switchyard), so it cannot be a router child's parent: call delegate_task from that agent instead.`,
      {
        field: "parentThreadId",
        relationship: "attached",
      },
    );
  }
  if (parent.projectId !== projectId) {
    throw new OrchestratorFailure(
      "invalid_request",
      `Parent thread ${parentThreadId} belongs to project ${parent.projectId}, not ${projectId}: a child thread lives in its parent's project. Omit projectId or pass ${parent.projectId}.`,
      { field: "parentThreadId", parentProjectId: parent.projectId },
    );
  }
  const depth = parent.lineage.depth + 1;
  if (depth > budgets.maxDelegationDepth) {
    throw new OrchestratorFailure(
      "invalid_request",
      `A child of thread ${parentThreadId} would be at depth ${depth}, beyond the budget of ${budgets.maxDelegationDepth} (budgets.maxDelegationDepth).`,
      {
        budget: "maxDelegationDepth",
        limit: budgets.maxDelegationDepth,
      },
    );
  }
  return parent;
}

/** The lineage of a router child of `parent`. */
export async function routerChildLineage(
  reader: ProjectionReader,
  parent: ThreadRecord,
  reportBack: boolean,
): Promise<NewThreadInput["lineage"]> {
  return {
    relationship: "subagent",
    parentThreadId: parent.id,
    parentRunId: (await activeRun(reader, parent.id))?.id ?? null,
    parentNodeId: null,
    delegatedTaskId: null,
    depth: parent.lineage.depth + 1,
    rootThreadId: parent.lineage.rootThreadId,
    reportBack,
  };
}

/** Shows a new router child in its parent's timeline (a `subagent` item, updated after each finished child turn). */
export async function showChildInParent(ctx: CommandContext, parent: ThreadRecord, child: ThreadRecord): Promise<void> {
  const run = await activeRun(ctx, parent.id);
  await putItem(ctx, {
    id: routerChildItemId(child.id),
    threadId: parent.id,
    runId: run?.id ?? null,
    attemptId: run?.currentAttemptId ?? null,
    kind: "subagent",
    status: "in_progress",
    text: child.title,
    data: {
      origin: "router_child",
      childThreadId: child.id,
      providerInstanceId: child.providerInstanceId,
      model: child.model,
      reportBack: child.lineage.reportBack === true,
    },
    createdBy: child.createdBy,
    creationSource: child.creationSource,
  });
}
