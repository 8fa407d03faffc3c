import type { InteractionMode, RuntimeMode } from "../../spec/index.js";
import type { SendMode } from "../../policy/index.js";
import type { Actor, Authority, CreationSource, ReachOrigin, ThreadRecord } from "../../store/records.js";
import type { MessageSource } from "../message-source.js";

/** What creating a thread needs. */
export interface CreateThreadRequest {
  /** Retries with the same command id return the same thread. Omit for new work each time. */
  readonly commandId?: string;
  readonly threadId?: string;
  readonly projectId: string;
  readonly providerInstanceId: string;
  readonly model?: string | null;
  readonly runtimeMode?: RuntimeMode;
  readonly interactionMode?: InteractionMode;
  readonly title?: string | null;
  /** The first message; without one the thread stays idle. */
  readonly prompt?: string | null;
  readonly instructions?: string | null;
  readonly cwd?: string;
  readonly branch?: string | null;
  readonly worktreePath?: string | null;
  readonly workspaceStrategy?: ThreadRecord["workspaceStrategy"];
  readonly createdBy: Actor;
  readonly creationSource: CreationSource;
  /**
   * Creates the thread as a router child of this thread: in the parent's project and workspace
   * (unless given), shown as the parent's child, its finished turns delivered to the parent.
   */
  readonly parentThreadId?: string | null;
  /** With `parentThreadId`: deliver each finished turn to the parent as a message (default true). */
  readonly reportBack?: boolean;
  /** Whose authority the thread acts under; omitted: the home's owner (in-process callers: the CLI, the demo, tests). */
  readonly authority?: Authority | null;
}

/** What sending a message needs. */
export interface SendRequest {
  readonly commandId?: string;
  readonly messageId?: string;
  readonly threadId: string;
  readonly text: string;
  readonly mode: SendMode;
  readonly createdBy: Actor;
  readonly creationSource: CreationSource;
  readonly instructions?: string | null;
  /** The thread whose agent sent the message: the receiving agent is told who wrote. */
  readonly source?: MessageSource | null;
  /** With a source: whether the message asks for a reply to it (default true). */
  readonly replyToSource?: boolean;
  /** The linked environment at the start of the sender's chain: the run it starts or steers carries it. */
  readonly reachedFrom?: ReachOrigin | null;
}

/**
 * What a send's receipt is checked against: the message as its sender wrote it (the source
 * header depends on the sender's title, which may change between retries). The sender is
 * already part of a caller's command id; `replyToSource` only when it differs from the default.
 */
export function sendReceiptRequest(request: SendRequest): Record<string, unknown> {
  return {
    threadId: request.threadId,
    text: request.text,
    mode: request.mode,
    ...(request.source != null && request.replyToSource === false ? { replyToSource: false } : {}),
  };
}
