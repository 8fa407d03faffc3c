/**
 * What Pi's RPC events mean for a Switchyard turn, as pure functions of the wire values (no
 * state, no I/O): tool kinds and titles, tool call starts and ends, streaming deltas, usage, how
 * a run ended, the warnings Pi's retries and extensions deserve, a conversation snapshot, and the
 * task cards of Pi's subagent tool.
 * `PiTurn` feeds the results to the turn ledger.
 */
import type {
  ProviderTurnError,
  ThreadSnapshot,
  ToolCallStart,
  ToolKind,
  TurnTerminalStatus,
  TurnUsage,
} from "@switchyard/sdk";
import {
  messageText,
  messageThinking,
  toolResultText,
  type PiMessage,
  type PiRpcEvent,
  type PiToolResult,
} from "./pi-wire.js";

type EventOf<T extends PiRpcEvent["type"]> = Extract<PiRpcEvent, { type: T }>;

/** `mcp__<server>__<tool>` → its parts, else null. */
export function parseMcpToolName(name: string): { readonly server: string; readonly tool: string } | null {
  const match = /^mcp__(.+?)__(.+)$/.exec(name);
  return match === null ? null : { server: match[1]!, tool: match[2]! };
}

/** Kind of a Pi tool, from its name: built-ins by name, `mcp__<server>__<tool>` as MCP. */
export function toolKindOf(name: string): ToolKind {
  switch (name) {
    case "bash":
      return "command";
    case "read":
    case "ls":
      return "file_read";
    case "grep":
    case "find":
      return "search";
    case "edit":
    case "write":
      return "file_change";
    default:
      return parseMcpToolName(name) !== null ? "mcp" : "other";
  }
}

/** A one-line summary of a tool call for a timeline. */
export function toolTitleOf(name: string, args: unknown): string {
  const input = typeof args === "object" && args !== null ? (args as Record<string, unknown>) : {};
  const pick = (key: string): string | null => (typeof input[key] === "string" ? (input[key] as string) : null);
  const mcp = parseMcpToolName(name);
  if (mcp !== null) return `${mcp.server}/${mcp.tool}`;
  switch (name) {
    case "bash":
      return pick("command") ?? name;
    case "read":
    case "edit":
    case "write":
    case "ls":
      return pick("path") ? `${name} ${pick("path")}` : name;
    case "grep":
    case "find":
      return pick("pattern") ? `${name} ${pick("pattern")}` : name;
    default:
      return name;
  }
}

/** The `tool_call.started` of a `tool_execution_start`; Pi's `toolCallId` is the item id. */
export function toolCallStartOf(event: EventOf<"tool_execution_start">): ToolCallStart {
  const mcp = parseMcpToolName(event.toolName);
  return {
    itemId: event.toolCallId,
    kind: toolKindOf(event.toolName),
    name: event.toolName,
    title: toolTitleOf(event.toolName, event.args),
    ...(mcp !== null ? { server: mcp.server } : {}),
    ...(event.args !== undefined ? { input: event.args } : {}),
  };
}

/** How a `tool_execution_end` ends its tool call (a declined call's failure is the ledger's to rename). */
export function toolCallEndOf(event: EventOf<"tool_execution_end">): {
  readonly itemId: string;
  readonly status: "completed" | "failed";
  readonly output?: string;
} {
  const output = toolResultText(event.result);
  return {
    itemId: event.toolCallId,
    status: event.isError === true ? "failed" : "completed",
    ...(output !== undefined ? { output } : {}),
  };
}

/**
 * The assistant text or thinking a `message_update` streams, or null for anything else. Pi 1.x
 * sends only the delta (no cumulative `message`, to keep the stream linear), so the role is the
 * one of the message the last `message_start` opened, `streamingRole`; 0.73 sends both.
 */
export function assistantDeltaOf(
  event: EventOf<"message_update">,
  streamingRole: string | null = null,
): { readonly channel: "message" | "reasoning"; readonly text: string } | null {
  if ((event.message?.role ?? streamingRole) !== "assistant") return null;
  const delta = event.assistantMessageEvent;
  if (delta === undefined || typeof delta.delta !== "string" || delta.delta === "") return null;
  if (delta.type === "text_delta") return { channel: "message", text: delta.delta };
  if (delta.type === "thinking_delta") return { channel: "reasoning", text: delta.delta };
  return null;
}

/** The final text and thinking of an assistant message (authoritative over the deltas; either may be empty). */
export function assistantFinalOf(message: PiMessage): { readonly text: string; readonly thinking: string } {
  return { text: messageText(message), thinking: messageThinking(message) };
}

const isCount = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value) && value >= 0;

/**
 * The usage of one assistant message, or null when Pi reported none. A figure Pi left out stays
 * out (never a 0 it did not measure). Pi's cost of 0 says nothing: for tokens it spent, its
 * registry has no price for the model; for none (a request aborted before its answer), it
 * says nothing about the price either, and as a turn's cost it would turn the other messages'
 * unpriced tokens into a "reported" $0. Either way it is left out for the host to price or flag.
 */
export function usageOf(message: PiMessage): TurnUsage | null {
  const usage = message.usage;
  if (usage === undefined) return null;
  const figures: Omit<TurnUsage, "byModel"> = {
    ...(isCount(usage.input) ? { inputTokens: usage.input } : {}),
    ...(isCount(usage.output) ? { outputTokens: usage.output } : {}),
    ...(isCount(usage.cacheRead) ? { cacheReadInputTokens: usage.cacheRead } : {}),
    ...(isCount(usage.cacheWrite) ? { cacheCreationInputTokens: usage.cacheWrite } : {}),
  };
  const cost = usage.cost?.total;
  const priced = isCount(cost) && cost > 0 ? { ...figures, costUsd: cost } : figures;
  if (Object.keys(priced).length === 0) return null;
  return typeof message.model === "string" && message.model !== ""
    ? { ...priced, byModel: { [message.model]: priced } }
    : priced;
}

/** How a run of Pi's agent loop ended, as the turn sees it. */
export type RunOutcome =
  /** The run is over: the turn ends with this status. */
  | {
      readonly kind: "terminal";
      readonly status: TurnTerminalStatus;
      readonly error?: ProviderTurnError;
      readonly warning?: string;
    }
  /** The run ended on a provider error; Pi may still retry or compact (wait before ending). */
  | { readonly kind: "error_pending"; readonly error: ProviderTurnError };

/** The last assistant message of a run: the one `agent_end` carries, else the last one seen. */
export function lastAssistantOf(event: EventOf<"agent_end">, lastSeen: PiMessage | null): PiMessage | undefined {
  return event.messages?.filter((message) => message.role === "assistant").at(-1) ?? lastSeen ?? undefined;
}

/** How `agent_end` ends a run, from its last assistant message's stop reason. */
export function runOutcomeOf(last: PiMessage | undefined, interruptRequested: boolean): RunOutcome {
  switch (last?.stopReason) {
    case "aborted":
      return { kind: "terminal", status: interruptRequested ? "interrupted" : "cancelled" };
    case "error": {
      const error: ProviderTurnError = { message: last.errorMessage ?? "The model provider reported an error." };
      // Pi answers an abort during a failing run with the error; an asked-for stop stays a stop.
      if (interruptRequested) return { kind: "terminal", status: "interrupted", error };
      return { kind: "error_pending", error };
    }
    case "length":
      return { kind: "terminal", status: "completed", warning: "The model stopped at its output token limit." };
    default:
      return { kind: "terminal", status: "completed" };
  }
}

/** The warning for Pi's `auto_retry_start`. */
export function retryWarningOf(event: EventOf<"auto_retry_start">): string {
  return `Pi retries after a provider error (attempt ${event.attempt ?? "?"} of ${event.maxAttempts ?? "?"}): ${event.errorMessage ?? "unknown error"}`;
}

/** The warning for an `extension_error`. */
export function extensionErrorWarningOf(event: EventOf<"extension_error">): string {
  return `A Pi extension failed in ${event.event ?? "a hook"}: ${event.error ?? "unknown error"}`;
}

/** The warning for steering Pi still queues when the run ended (it goes with the next prompt). */
export function lateSteeringWarning(queued: number): string {
  return `${queued} steering message(s) reached Pi after its last model call; Pi delivers them with the next prompt.`;
}

/** The conversation as `get_messages` holds it: one entry per user message, with the last assistant text that followed. */
export function snapshotOf(messages: readonly PiMessage[]): ThreadSnapshot {
  const turns: { userText: string; assistantText: string }[] = [];
  for (const message of messages) {
    if (message.role === "user") turns.push({ userText: messageText(message), assistantText: "" });
    else if (message.role === "assistant") {
      const text = messageText(message);
      const current = turns.at(-1);
      if (current !== undefined && text !== "") current.assistantText = text;
    }
  }
  return { turns };
}

/** The tool of Pi's example subagent extension (`examples/extensions/subagent`). */
export const PI_SUBAGENT_TOOL = "subagent";

const SUBAGENT_STATUS: Readonly<Record<string, "running" | "completed" | "failed">> = {
  pending: "running",
  running: "running",
  completed: "completed",
  failed: "failed",
  aborted: "failed",
};

const MAX_SUBAGENT_SUMMARY_CHARS = 2_000;

/** One task card of Pi's subagent tool, as a provider-native sub-agent Switchyard observes. */
export interface PiSubagentCard {
  /** `<tool call id>#<index in details.results>`: stable while the tool runs (results only grow). */
  readonly nativeId: string;
  readonly title: string;
  readonly status: "running" | "completed" | "failed";
  readonly summary?: string;
}

/**
 * The task cards of a `subagent` tool result or partial result (seed 000: the documented
 * `details.results` shape of Pi's example subagent extension: `{ agent, task, status, messages,
 * errorMessage? }` per child). They carry no child thread id: Pi runs each child as its own
 * process, which Switchyard does not own. Any other tool, or a shape this does not recognize,
 * gives null and stays an ordinary tool call.
 */
export function subagentCardsOf(
  toolName: string,
  toolCallId: string,
  result: PiToolResult | undefined,
): PiSubagentCard[] | null {
  if (toolName !== PI_SUBAGENT_TOOL) return null;
  const details = result?.details;
  if (typeof details !== "object" || details === null) return null;
  const results = (details as { readonly results?: unknown }).results;
  if (!Array.isArray(results)) return null;
  const cards: PiSubagentCard[] = [];
  for (const [index, entry] of results.entries()) {
    if (typeof entry !== "object" || entry === null) return null;
    const child = entry as {
      readonly agent?: unknown;
      readonly task?: unknown;
      readonly status?: unknown;
      readonly messages?: unknown;
      readonly errorMessage?: unknown;
    };
    const status = typeof child.status === "string" ? SUBAGENT_STATUS[child.status] : undefined;
    if (typeof child.agent !== "string" || typeof child.task !== "string" || status === undefined) return null;
    const messages = Array.isArray(child.messages) ? (child.messages as PiMessage[]) : [];
    const answer =
      status === "running" ? "" : messageText([...messages].reverse().find((message) => message?.role === "assistant"));
    const summary = answer !== "" ? answer : typeof child.errorMessage === "string" ? child.errorMessage : "";
    cards.push({
      nativeId: `${toolCallId}#${index}`,
      title: `${child.agent}: ${child.task}`.slice(0, 200),
      status,
      ...(summary !== "" ? { summary: summary.slice(0, MAX_SUBAGENT_SUMMARY_CHARS) } : {}),
    });
  }
  return cards;
}
