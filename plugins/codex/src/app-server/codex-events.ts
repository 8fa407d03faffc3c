import type { McpEndpointGrant, ProviderTurnError, TurnTerminalStatus } from "@switchyard/sdk";
import type { ServerNotification, v2 } from "../codex-wire.js";
import type { LedgerChange } from "../shared/codex-ledger-changes.js";
import { codexUsageOf } from "../shared/codex-usage.js";
import type { TurnUsage } from "@switchyard/sdk";
import { reasoningText, toolCallEnd, toolCallStart } from "./codex-items.js";

/** A file-change item (its diff titles the approval Codex asks for it). */
export type FileChangeItem = Extract<v2.ThreadItem, { type: "fileChange" }>;

/**
 * What a notification changes in one turn of the session's own thread: its items (the ledger's
 * changes) and what only Codex reports.
 */
export type CodexTurnChange =
  | LedgerChange
  /**
   * One model request's usage (`last`), with the thread's running total after it: Codex repeats
   * the same report (on a rate-limit update), which adds nothing unless the total moved.
   */
  | { readonly type: "request_usage"; readonly usage: TurnUsage; readonly runningTotalTokens: number | null }
  | { readonly type: "file_change"; readonly item: FileChangeItem }
  /** Codex's own report on one of its sub-agents (`subAgentActivity`). */
  | {
      readonly type: "subagent_activity";
      readonly nativeId: string;
      readonly title: string;
      readonly status: "running" | "completed" | "failed";
    }
  /** `spawn_agent` finished: these threads are the turn's sub-agents from now on. */
  | {
      readonly type: "subagents_spawned";
      readonly threadIds: readonly string[];
      readonly title: string | null;
      /** The `spawn_agent` call's item id. */
      readonly itemId: string;
      /** The model the parent asked for, when it named one. */
      readonly model: string | null;
    }
  /** An error Codex will not retry; the turn's failure reports it when Codex gives none. */
  | { readonly type: "error"; readonly error: ProviderTurnError }
  | { readonly type: "completed"; readonly turn: v2.Turn };

/** One thing a Codex notification means for the session. */
export type CodexEvent =
  /** Codex announced a turn (it answers `turn/start` first, and only then is the turn active). */
  | { readonly kind: "turn_started"; readonly codexTurnId: string }
  | { readonly kind: "turn"; readonly codexTurnId: string; readonly change: CodexTurnChange }
  /** Codex retries after an error; the turn goes on. */
  | { readonly kind: "retrying"; readonly codexTurnId: string; readonly message: string }
  /** A sub-agent's thread completed an assistant message. */
  | { readonly kind: "child_message"; readonly threadId: string; readonly text: string }
  /** A sub-agent's thread ended a turn. */
  | {
      readonly kind: "child_turn_completed";
      readonly threadId: string;
      readonly status: "completed" | "failed";
      readonly error: string | null;
    }
  /** Codex unloaded a thread (a fork this process let go of). */
  | { readonly kind: "thread_closed"; readonly threadId: string }
  /** Codex withdrew a request it had sent (answered elsewhere, or its turn ended). */
  | { readonly kind: "request_resolved"; readonly rpcId: string | number }
  /** Something a person should know about the session, reported once. */
  | { readonly kind: "notice"; readonly message: string };

/** What the mapping needs to know about the session. */
export interface CodexEventContext {
  /** The session's own Codex thread; notifications of any other thread come from sub-agents. */
  readonly threadId: string | null;
  /** The session's MCP grant, to name the Switchyard server's tool calls. */
  readonly grant: McpEndpointGrant | null;
}

/** The first key of a Codex error info (`"usageLimitExceeded"`, `{ httpConnectionFailed: … }`). */
export function codexErrorCode(info: v2.CodexErrorInfo | null): string | undefined {
  if (info === null) return undefined;
  if (typeof info === "string") return info;
  const [key] = Object.keys(info);
  return key;
}

function turnError(error: v2.TurnError): ProviderTurnError {
  const code = codexErrorCode(error.codexErrorInfo);
  return { ...(code !== undefined ? { code } : {}), message: error.message };
}

function itemStarted(item: v2.ThreadItem, grant: McpEndpointGrant | null): CodexTurnChange[] {
  // A message opens with its first delta; Codex starts it empty.
  if (item.type === "agentMessage") return [];
  const start = toolCallStart(item, grant);
  return [
    ...(item.type === "fileChange" ? [{ type: "file_change", item } as const] : []),
    ...(start !== null ? [{ type: "tool_started", start: { itemId: item.id, ...start } } as const] : []),
  ];
}

function itemCompleted(item: v2.ThreadItem, grant: McpEndpointGrant | null): CodexTurnChange[] {
  switch (item.type) {
    case "agentMessage":
      return [{ type: "message_completed", itemId: item.id, text: item.text }];
    case "reasoning":
      return [{ type: "reasoning_completed", itemId: item.id, text: reasoningText(item) }];
    case "userMessage":
      return [];
    case "subAgentActivity": {
      const status = item.kind === "completed" ? "completed" : item.kind === "interrupted" ? "failed" : "running";
      return [{ type: "subagent_activity", nativeId: item.agentThreadId, title: item.agentPath, status }];
    }
    default:
      break;
  }
  // A tool item may complete without having started (Codex reports quick ones once).
  const changes = itemStarted(item, grant);
  const end = toolCallEnd(item);
  if (end === null) return changes;
  changes.push({
    type: "tool_completed",
    itemId: item.id,
    status: end.status,
    ...(end.output !== undefined ? { output: end.output } : {}),
  });
  if (item.type === "collabAgentToolCall" && item.tool === "spawnAgent")
    changes.push({
      type: "subagents_spawned",
      threadIds: item.receiverThreadIds,
      title: item.prompt,
      itemId: item.id,
      model: item.model,
    });
  return changes;
}

/** Notifications of a sub-agent's thread: only its messages and turn ends matter. */
function childEvents(threadId: string, notification: ServerNotification): CodexEvent[] {
  switch (notification.method) {
    case "thread/closed":
      return [{ kind: "thread_closed", threadId }];
    case "item/completed":
      return notification.params.item.type === "agentMessage"
        ? [{ kind: "child_message", threadId, text: notification.params.item.text }]
        : [];
    case "turn/completed": {
      const { turn } = notification.params;
      return [
        {
          kind: "child_turn_completed",
          threadId,
          status: turn.status === "completed" ? "completed" : "failed",
          error: turn.error?.message ?? null,
        },
      ];
    }
    default:
      return [];
  }
}

/**
 * What one `codex app-server` notification means, without touching any state: the session
 * routes the result to the turn it names (by Codex turn id) or handles it itself. Notifications
 * this driver does not use map to nothing.
 */
export function codexEventsOf(notification: ServerNotification, context: CodexEventContext): CodexEvent[] {
  const threadId = (notification.params as { threadId?: unknown }).threadId;
  if (typeof threadId === "string" && threadId !== context.threadId) return childEvents(threadId, notification);
  const turn = (codexTurnId: string, changes: readonly CodexTurnChange[]): CodexEvent[] =>
    changes.map((change) => ({ kind: "turn", codexTurnId, change }));
  switch (notification.method) {
    case "turn/started":
      return [{ kind: "turn_started", codexTurnId: notification.params.turn.id }];
    case "item/started":
      return turn(notification.params.turnId, itemStarted(notification.params.item, context.grant));
    case "item/completed":
      return turn(notification.params.turnId, itemCompleted(notification.params.item, context.grant));
    case "item/agentMessage/delta": {
      const { turnId, itemId, delta } = notification.params;
      return turn(turnId, [{ type: "message_delta", itemId, text: delta }]);
    }
    case "item/reasoning/summaryTextDelta":
    case "item/reasoning/textDelta": {
      const { turnId, itemId, delta } = notification.params;
      return turn(turnId, [{ type: "reasoning_delta", itemId, text: delta }]);
    }
    case "thread/tokenUsage/updated": {
      const { last, total } = notification.params.tokenUsage;
      const runningTotalTokens = typeof total?.totalTokens === "number" ? total.totalTokens : null;
      return turn(notification.params.turnId, [
        { type: "request_usage", usage: codexUsageOf(last), runningTotalTokens },
      ]);
    }
    case "error": {
      const { error, willRetry, turnId } = notification.params;
      if (willRetry)
        return [{ kind: "retrying", codexTurnId: turnId, message: `Codex retries after an error: ${error.message}` }];
      return turn(turnId, [{ type: "error", error: turnError(error) }]);
    }
    case "turn/completed":
      return turn(notification.params.turn.id, [{ type: "completed", turn: notification.params.turn }]);
    case "serverRequest/resolved":
      return [{ kind: "request_resolved", rpcId: notification.params.requestId }];
    case "mcpServer/startupStatus/updated": {
      const { name, status, error } = notification.params;
      return status === "failed"
        ? [{ kind: "notice", message: `MCP server "${name}" failed to start${error ? `: ${error}` : ""}.` }]
        : [];
    }
    case "warning":
      return [{ kind: "notice", message: notification.params.message }];
    case "configWarning":
      return [{ kind: "notice", message: notification.params.summary }];
    default:
      return [];
  }
}

/** How a turn Codex completed ends for the host. */
export interface CodexTerminal {
  readonly status: TurnTerminalStatus;
  readonly error?: ProviderTurnError;
  /** Said to the person when Codex's status is one this driver does not know. */
  readonly warning?: string;
}

/**
 * The terminal of a `turn/completed`. An interrupted turn the host did not interrupt was ended
 * by Codex itself (an approval answered `cancel`): `cancelled`. A failure without an error of
 * its own reports the last error Codex sent during the turn.
 */
export function codexTerminalOf(
  turn: v2.Turn,
  context: { readonly interruptRequested: boolean; readonly lastError: ProviderTurnError | null },
): CodexTerminal {
  switch (turn.status) {
    case "completed":
      return { status: "completed" };
    case "interrupted":
      return { status: context.interruptRequested ? "interrupted" : "cancelled" };
    case "failed":
      return {
        status: "failed",
        error:
          turn.error !== null
            ? turnError(turn.error)
            : (context.lastError ?? { message: "Codex reported the turn as failed without an error." }),
      };
    default:
      return {
        status: "failed",
        error: { message: `unexpected turn status ${turn.status}` },
        warning: `Codex ended a turn with status "${turn.status}"; treated as failed.`,
      };
  }
}
