import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { ScriptedModelServer } from "@switchyard/testkit";
import type { DelegateTaskResult } from "../../src/services/delegation/task-view.js";
import type { NativeSubagentView } from "../../src/services/native-subagents.js";
import { mustCall } from "./mcp-client.js";
import type { McpLab } from "./mcp-lab.js";
import { until } from "./until.js";

// What the real-harness tests of issue 40 do alike: a task whose harness spawns its own
// sub-agents, the inbox while it runs, and the tree's stop.

/** `task_status`'s answer with the task's native children. */
export type NativeStatusResult = DelegateTaskResult & { nativeSubagents?: NativeSubagentView[] };

/** A request as `t3_pending_request` lists it, with the native child that asked, if one did. */
export interface InboxRequest {
  readonly requestId: string;
  readonly kind: string;
  readonly approval: { readonly title: string } | null;
  readonly nativeSubagent?: { readonly nativeId: string; readonly itemId: string; readonly title: string | null };
}

/** The task's native children, as `task_status` shows them. */
export async function nativeChildrenOf(client: Client, taskId: string): Promise<NativeSubagentView[]> {
  return (await mustCall<NativeStatusResult>(client, "task_status", { taskId })).nativeSubagents!;
}

/**
 * Delegates to `instance` a task whose harness calls Codex's `spawn_agent` twice: one child
 * finishes (`quick`), one is held at the model server (`<holdPrefix>-native-held`), and the
 * parent's own turn is held after both (`<holdPrefix>-parent-held`). Resolves once both holds
 * are reached; the caller releases them.
 */
export async function delegateSpawnAgentPair(
  root: Client,
  server: ScriptedModelServer,
  options: { instance: string; holdPrefix: string },
): Promise<{ task: DelegateTaskResult; quick: string; slow: string; holds: readonly string[] }> {
  const childHold = `${options.holdPrefix}-native-held`;
  const parentHold = `${options.holdPrefix}-parent-held`;
  const quick = "sub task @@reply sub answer 7";
  const slow = `long sub task @@hold ${childHold} @@reply never reached`;
  const task = await mustCall<DelegateTaskResult>(root, "delegate_task", {
    task:
      `spawn @@tool spawn_agent ${JSON.stringify({ message: quick })} @@then ` +
      `@@tool spawn_agent ${JSON.stringify({ message: slow })} @@then @@hold ${parentHold} @@reply main is done`,
    title: `${options.instance} with native children`,
    mode: "async",
    target: { providerInstanceId: options.instance },
    runtimeMode: "full-access",
  });
  await server.waitForHold(childHold, 180_000);
  await server.waitForHold(parentHold, 180_000);
  return { task, quick, slow, holds: [childHold, parentHold] };
}

/** Waits until the delegated task has been finalized. */
export async function taskSettled(lab: McpLab, taskId: string): Promise<void> {
  await until("the task to settle", () => lab.host.store.get("delegatedTask", taskId)!.finalizedAt !== null, {
    attempts: 600,
    intervalMs: 100,
  });
}

/** Stops the tree at the task (`task_cancel`) and waits until the task settled. */
export async function cancelTask(lab: McpLab, client: Client, taskId: string): Promise<void> {
  const cancelled = await mustCall<{ cancelled: boolean }>(client, "task_cancel", { taskId, reason: "stop the tree" });
  if (!cancelled.cancelled) throw new Error(`task_cancel did not cancel ${taskId}`);
  await taskSettled(lab, taskId);
}

/**
 * Accepts whatever the task's thread asks (the spawning call itself may ask first) until the task
 * ends: what the inbox showed, in order.
 */
export async function approveUntilTaskEnds(
  lab: McpLab,
  approver: Client,
  task: DelegateTaskResult,
): Promise<InboxRequest[]> {
  const seen: InboxRequest[] = [];
  for (let round = 0; lab.host.store.get("delegatedTask", task.taskId)!.finalizedAt === null; round += 1) {
    if (round > 1_800) throw new Error(`the task never ended; requests seen: ${JSON.stringify(seen)}`);
    const { requests } = await mustCall<{ requests: InboxRequest[] }>(approver, "t3_pending_request", {
      threadId: task.childThreadId,
      action: "list",
    });
    for (const request of requests) {
      seen.push(request);
      await mustCall(approver, "t3_pending_request", {
        threadId: task.childThreadId,
        action: "respond",
        requestId: request.requestId,
        decision: "accept",
      });
    }
    if (requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return seen;
}
