import type * as acp from "@agentclientprotocol/sdk/unstable";
import { withStderrTail, type ProviderTurnError, type ToolKind, type TurnTerminalStatus } from "@switchyard/spec";
import type { ToolCallStart, TurnUsage } from "../harness/index.js";
import { mcpServerOf, planMarkdown, toolKindOf, toolOutputText } from "./acp-tool-calls.js";
import { acpUsageOf } from "./acp-usage.js";

/**
 * The ACP wire read as Switchyard sees it, without state: what one `session/update`, one
 * `session/prompt` response, one agent exit or one `session/load` replay means. The turn
 * (acp-turn.ts) applies the results to its ledger; nothing here emits.
 */

/** How a tool call ended, when its update says it did. @public */
export interface AcpToolCallEnd {
  readonly status: "completed" | "failed";
  readonly output?: string;
}

/** What one `session/update` means. @public */
export type AcpUpdate =
  /** Assistant text. */
  | { readonly kind: "message_chunk"; readonly text: string }
  /** Reasoning text. */
  | { readonly kind: "thought_chunk"; readonly text: string }
  /**
   * A tool call was announced (`announced`: a `tool_call`, which ends the text before it) or
   * updated (`tool_call_update`). `start` describes it for a call not seen before; `end` is
   * set when the update finishes it.
   */
  | {
      readonly kind: "tool_call";
      readonly announced: boolean;
      readonly start: ToolCallStart;
      readonly end: AcpToolCallEnd | null;
    }
  /** The agent's plan, as a markdown checklist. */
  | { readonly kind: "plan"; readonly text: string }
  /** The session's mode changed. */
  | { readonly kind: "mode_changed"; readonly currentModeId: string }
  /** The session's config options changed. */
  | { readonly kind: "config_changed"; readonly configOptions: acp.SessionConfigOption[] }
  /** Something the user should know (`/unstable` `notice`: a warning, an error, information). */
  | { readonly kind: "notice"; readonly message: string }
  /** One of the agent's own sub-agents changed (`/unstable` `subagent_update`: a patch). */
  | { readonly kind: "subagent"; readonly update: acp.SubagentUpdate }
  /** Nothing to report (our own prompt echoed, usage, commands, session info, empty chunks). */
  | { readonly kind: "none" };

/** What the mapping needs to know about the session. @public */
export interface AcpUpdateContext {
  /** The MCP servers the session injected: their names identify MCP tool calls. */
  readonly injectedServers: readonly string[];
  /** The flavor's tool classification; undefined from it means the default. */
  readonly toolKind?: (toolCall: acp.ToolCall | acp.ToolCallUpdate) => ToolKind | undefined;
}

/** Reads one `session/update`. @public */
export function readSessionUpdate(update: acp.SessionUpdate, context: AcpUpdateContext): AcpUpdate {
  switch (update.sessionUpdate) {
    case "agent_message_chunk":
      return update.content.type === "text" && update.content.text.length > 0
        ? { kind: "message_chunk", text: update.content.text }
        : { kind: "none" };
    case "agent_thought_chunk":
      return update.content.type === "text" && update.content.text.length > 0
        ? { kind: "thought_chunk", text: update.content.text }
        : { kind: "none" };
    case "tool_call":
    case "tool_call_update":
      return {
        kind: "tool_call",
        announced: update.sessionUpdate === "tool_call",
        start: toolCallStartOf(update, context),
        end: toolCallEndOf(update),
      };
    case "plan":
      return update.entries.length > 0 ? { kind: "plan", text: planMarkdown(update.entries) } : { kind: "none" };
    case "current_mode_update":
      return { kind: "mode_changed", currentModeId: update.currentModeId };
    case "config_option_update":
      return { kind: "config_changed", configOptions: update.configOptions };
    case "notice":
      return { kind: "notice", message: noticeMessage(update) };
    case "subagent_update":
      return { kind: "subagent", update };
    default:
      return { kind: "none" };
  }
}

/** A notice as one line: its title, then its description; severities other than warning are named. @experimental */
export function noticeMessage(notice: acp.Notice): string {
  const description =
    typeof notice.description === "string" && notice.description.trim().length > 0
      ? `: ${notice.description.trim()}`
      : "";
  const severity = notice.severity === "warning" ? "" : `${String(notice.severity)}: `;
  return `${severity}${notice.title}${description}`;
}

/** A tool call as `tool_call.started` describes it. @public */
export function toolCallStartOf(call: acp.ToolCall | acp.ToolCallUpdate, context: AcpUpdateContext): ToolCallStart {
  const kind = context.toolKind?.(call) ?? toolKindOf(call, context.injectedServers);
  const mcp = mcpServerOf(call, context.injectedServers);
  const title = call.title ?? call.toolCallId;
  return {
    itemId: call.toolCallId,
    kind,
    name: call.name ?? (mcp !== null ? `mcp__${mcp.server}__${mcp.tool}` : title),
    title,
    ...(mcp !== null ? { server: mcp.server } : {}),
    ...(call.rawInput !== undefined ? { input: call.rawInput } : {}),
  };
}

/** The end of a tool call, when its status is terminal. @public */
export function toolCallEndOf(call: acp.ToolCall | acp.ToolCallUpdate): AcpToolCallEnd | null {
  if (call.status !== "completed" && call.status !== "failed") return null;
  const output = toolOutputText(call);
  return { status: call.status, ...(output !== undefined ? { output } : {}) };
}

/** How a turn ends for a `session/prompt` response. @public */
export interface AcpPromptEnding {
  readonly status: TurnTerminalStatus;
  readonly error?: ProviderTurnError;
  readonly usage?: TurnUsage;
  /** Said to the user before the terminal. */
  readonly warning?: string;
}

/**
 * The stop reason as a terminal: end_turn → completed; max_tokens and max_turn_requests →
 * completed with a warning; refusal → failed (the task was not done); cancelled → interrupted
 * when Switchyard asked for it, else cancelled; anything else → completed with a warning.
 * @public
 */
export function promptEnding(response: acp.PromptResponse, interruptRequested: boolean): AcpPromptEnding {
  const usage = response.usage ? { usage: acpUsageOf(response.usage) } : {};
  const stopReason = response.stopReason;
  switch (stopReason) {
    case "end_turn":
      return { status: "completed", ...usage };
    case "max_tokens":
    case "max_turn_requests":
      return { status: "completed", ...usage, warning: `The agent stopped the turn early (${stopReason}).` };
    case "refusal":
      return {
        status: "failed",
        error: { code: "refusal", message: "The agent refused to continue this turn." },
        ...usage,
      };
    case "cancelled":
      return { status: interruptRequested ? "interrupted" : "cancelled", ...usage };
    default:
      return {
        status: "completed",
        ...usage,
        warning: `Unknown stop reason "${String(stopReason)}" treated as completed.`,
      };
  }
}

/** How the agent process ended, or null when only its connection closed. @public */
export type AcpAgentExit = { readonly exitCode: number | null; readonly signal: string | null } | null;

/** The `session.exited` report for a dead agent (its stderr tail in the reason); a clean exit carries no error. @public */
export function agentExitReport(
  exit: AcpAgentExit,
  stderrTail: string | undefined,
): { readonly reason: string; readonly error?: ProviderTurnError } {
  const how =
    exit === null
      ? "closed its connection"
      : `exited (code ${exit.exitCode ?? "none"}, signal ${exit.signal ?? "none"})`;
  const reason = withStderrTail(`The ACP agent process ${how}.`, stderrTail);
  if (exit !== null && exit.exitCode === 0) return { reason };
  return { reason, error: { code: exit?.exitCode != null ? String(exit.exitCode) : "agent_exited", message: reason } };
}

/** One turn of a conversation, as an agent replays it. @public */
export interface AcpReplayedTurn {
  userText: string;
  assistantText: string;
}

/**
 * The turns of the history an agent replays during `session/load`: each run of user text opens
 * a turn, the assistant text after it belongs to it. Other updates (tools, thoughts) are not
 * part of a snapshot.
 * @public
 */
export function replayedTurns(updates: readonly acp.SessionUpdate[]): AcpReplayedTurn[] {
  const turns: AcpReplayedTurn[] = [];
  for (const update of updates) {
    if (update.sessionUpdate !== "user_message_chunk" && update.sessionUpdate !== "agent_message_chunk") continue;
    if (update.content.type !== "text") continue;
    let current = turns.at(-1);
    const opensTurn =
      update.sessionUpdate === "user_message_chunk"
        ? current === undefined || current.assistantText.length > 0
        : current === undefined;
    if (opensTurn || current === undefined) {
      current = { userText: "", assistantText: "" };
      turns.push(current);
    }
    if (update.sessionUpdate === "user_message_chunk") current.userText += update.content.text;
    else current.assistantText += update.content.text;
  }
  return turns;
}
