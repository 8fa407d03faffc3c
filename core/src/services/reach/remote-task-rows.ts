import type { CommandContext } from "../../engine/command-context.js";
import { latestExecutedRun } from "../../engine/run-lifecycle.js";
import type { ThreadRecord } from "../../store/records.js";

/** A task this environment delegated to a linked one, as the delegating side keeps it. */
export interface RemoteTask {
  /** The link (its name here) the task runs behind. */
  readonly linkName: string;
  /** The task's id there: the key of its receipt here. */
  readonly remoteTaskId: string;
  /** The other environment's own id (the one its links name). */
  readonly environmentId: string;
  readonly parentThreadId: string;
  readonly parentRunId: string;
  readonly childThreadId: string;
  readonly childThreadLink: string;
  /** The child's page in the other environment's web UI, when that environment sent one (never made up here). */
  readonly childThreadWebUrl?: string;
  readonly title: string;
  /** The child's provider and model there, as the delegation's answer named them (absent on rows recorded before they were kept). */
  readonly providerInstanceId?: string | null;
  readonly model?: string | null;
  /** The profile the delegation named (the other environment's, by name), if any. */
  readonly profile?: string | null;
  /** `pending` until the result is here and handed to the parent; `acknowledged` when the parent read it in a wait or status. */
  readonly delivery: "pending" | "delivered" | "acknowledged" | "disposed";
  readonly status: string | null;
  readonly summary: string | null;
  readonly createdAt: string;
  readonly receivedAt: string | null;
}

/** What a remote task's `data` column holds. */
export type RemoteTaskData = Omit<
  RemoteTask,
  "linkName" | "remoteTaskId" | "parentThreadId" | "createdAt" | "receivedAt"
>;

/** The parent's timeline item that shows a remote child. */
export const remoteTaskItemId = (linkName: string, remoteTaskId: string) =>
  `item:remote-task:${linkName}:${remoteTaskId}`;
/** The message that delivers a remote task's result; its id makes the delivery happen once. */
export const remoteResultMessageId = (linkName: string, remoteTaskId: string) =>
  `message:remote-task-result:${linkName}:${remoteTaskId}`;

/**
 * What a run delivering a remote task's result names in `deliversResultOf`: never a local task's
 * id (those are `task:…`), so the local delegation saga leaves such runs to this module.
 */
export const remoteResultKey = (linkName: string, remoteTaskId: string) => `remote-task:${linkName}:${remoteTaskId}`;

/** Whether the system may start a turn in a parent on its own (the rule of local results). */
export async function acceptsAutomaticTurn(ctx: CommandContext, thread: ThreadRecord): Promise<boolean> {
  if (thread.deletedAt !== null || thread.stopped) return false;
  return (await latestExecutedRun(ctx, thread.id))?.interruptedOnRequest !== true;
}
