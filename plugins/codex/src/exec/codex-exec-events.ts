import type { ThreadEvent, ThreadItem } from "@openai/codex-sdk";
import type { McpEndpointGrant, ProviderTurnError, TurnTerminalStatus } from "@switchyard/sdk";
import type { LedgerChange } from "../shared/codex-ledger-changes.js";
import { execToolCallEnd, execToolCallStart } from "./codex-exec-items.js";
import type { ExecTokenCounts } from "./codex-exec-totals.js";

/** What one event of a `codex exec` run means for its turn: its items (the ledger's changes) and the run's own. */
export type ExecChange =
  | LedgerChange
  /** Codex named the thread (on the first turn: a new resume cursor). */
  | { readonly type: "thread"; readonly threadId: string }
  | { readonly type: "started" }
  /** All of a message's text so far (the SDK reports it whole; the delta before it streams what is new). */
  | { readonly type: "message_text"; readonly itemId: string; readonly text: string }
  /** A non-fatal error item (Codex repeats some every turn, so the session says each once). */
  | { readonly type: "notice"; readonly message: string }
  /** The stream's error event; it becomes the turn's failure when no other comes. */
  | { readonly type: "error"; readonly error: ProviderTurnError }
  /** The thread's token total when the turn ended (`codex exec` reports the whole thread's, not the turn's). */
  | { readonly type: "thread_total"; readonly total: ExecTokenCounts }
  /** The run ended the turn. */
  | { readonly type: "ended"; readonly status: TurnTerminalStatus; readonly error?: ProviderTurnError };

/** What the mapping needs to know about the turn. */
export interface ExecEventContext {
  /** The host turn: `codex exec` numbers items per process (`item_0`…), so ids are scoped to it. */
  readonly hostTurnId: string;
  readonly grant: McpEndpointGrant | null;
  /** The text of a message so far: the SDK reports whole texts, the host wants what is new. */
  readonly messageText: (itemId: string) => string;
}

function itemChanges(item: ThreadItem, completed: boolean, context: ExecEventContext): ExecChange[] {
  const itemId = `${context.hostTurnId}:${item.id}`;
  switch (item.type) {
    case "agent_message": {
      const before = context.messageText(itemId);
      const delta = item.text.startsWith(before) ? item.text.slice(before.length) : item.text;
      return [
        ...(delta.length > 0
          ? [
              { type: "message_delta", itemId, text: delta } as const,
              { type: "message_text", itemId, text: item.text } as const,
            ]
          : []),
        ...(completed ? [{ type: "message_completed", itemId, text: item.text } as const] : []),
      ];
    }
    case "reasoning":
      return completed && item.text.length > 0 ? [{ type: "reasoning_completed", itemId, text: item.text }] : [];
    case "error":
      return completed ? [{ type: "notice", message: item.message }] : [];
    case "todo_list":
      return [];
    default:
      break;
  }
  const start = execToolCallStart(item, context.grant);
  if (start === null) return [];
  const end = completed ? execToolCallEnd(item) : null;
  return [
    { type: "tool_started", start: { itemId, ...start } },
    ...(end !== null
      ? [
          {
            type: "tool_completed",
            itemId,
            status: end.status,
            ...(end.output !== undefined ? { output: end.output } : {}),
          } as const,
        ]
      : []),
  ];
}

/**
 * What one `@openai/codex-sdk` event means, without touching any state: the session applies
 * the result to its turn's ledger. Codex reports some items (a model-metadata warning) before
 * `turn.started`, so every item starts the turn too.
 */
export function execChangesOf(event: ThreadEvent, context: ExecEventContext): ExecChange[] {
  switch (event.type) {
    case "thread.started":
      return [{ type: "thread", threadId: event.thread_id }];
    case "turn.started":
      return [{ type: "started" }];
    case "item.started":
    case "item.updated":
    case "item.completed":
      return [{ type: "started" }, ...itemChanges(event.item, event.type === "item.completed", context)];
    case "turn.completed":
      return [
        { type: "thread_total", total: event.usage },
        { type: "ended", status: "completed" },
      ];
    case "turn.failed":
      return [{ type: "ended", status: "failed", error: { code: "turn_failed", message: event.error.message } }];
    case "error":
      return [{ type: "error", error: { code: "codex_error", message: event.message } }];
    default:
      return [];
  }
}
