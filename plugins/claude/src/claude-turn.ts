import type {
  AdapterEvent,
  NativeSubagentFacts,
  ProviderTurnError,
  RuntimeRequestBook,
  ToolKind,
  TurnTerminalStatus,
  TurnUsage,
} from "@switchyard/sdk";
import { NativeSubagentBook, TurnLedger, parseMcpToolName } from "@switchyard/sdk";
import {
  contentBlocks,
  isTextBlock,
  isThinkingBlock,
  isToolResultBlock,
  isToolUseBlock,
  toolResultText,
  type ModelUsage,
  type SDKAssistantMessage,
  type SDKPartialAssistantMessage,
  type SDKResultMessage,
  type SDKUserMessage,
} from "./claude-wire.js";

/** Claude's tool that starts one of its own sub-agents (`Task` before 2.1). */
const SUBAGENT_TOOLS = new Set(["Agent", "Task"]);

/** Kind of a Claude tool, from its name. */
export function toolKindOf(name: string): ToolKind {
  if (parseMcpToolName(name) !== null) return "mcp";
  switch (name) {
    case "Bash":
    case "BashOutput":
    case "KillShell":
    case "PowerShell":
    case "Monitor":
      return "command";
    case "Read":
    case "NotebookRead":
    case "LS":
      return "file_read";
    case "Edit":
    case "MultiEdit":
    case "Write":
    case "NotebookEdit":
      return "file_change";
    case "Glob":
    case "Grep":
    case "ToolSearch":
      return "search";
    case "WebFetch":
    case "WebSearch":
      return "web";
    default:
      return SUBAGENT_TOOLS.has(name) ? "subagent" : "other";
  }
}

/** A one-line summary of a tool call for a timeline. */
export function toolTitleOf(name: string, input: unknown): string {
  const args = typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {};
  const pick = (key: string): string | null =>
    typeof args[key] === "string" && args[key] !== "" ? (args[key] as string) : null;
  const mcp = parseMcpToolName(name);
  if (mcp !== null) return `${mcp.server}/${mcp.tool}`;
  const subject =
    pick("command") ??
    pick("file_path") ??
    pick("notebook_path") ??
    pick("pattern") ??
    pick("url") ??
    pick("query") ??
    pick("description");
  if (subject === null) return name;
  return name === "Bash" ? subject : `${name} ${subject}`;
}

/** What an `Agent` (or `Task`) call's input says of the sub-agent it spawns. */
function subagentFactsOf(input: unknown): NativeSubagentFacts {
  const args = typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {};
  const text = (key: string): string | undefined => (typeof args[key] === "string" ? args[key] : undefined);
  const title = text("description");
  const task = text("prompt");
  const agentType = text("subagent_type");
  const model = text("model");
  return {
    ...(title !== undefined ? { title } : {}),
    ...(task !== undefined ? { task } : {}),
    ...(agentType !== undefined ? { agentType } : {}),
    ...(model !== undefined ? { model } : {}),
  };
}

/**
 * What the `Agent` tool's structured result (`tool_use_result`, Claude Code 2.1.33x) says of
 * the finished sub-agent: its report (without the hand-back frame the model reads), the model
 * it resolved to, its agent type and its own token usage. Claude reports no cost per sub-agent.
 */
export function subagentReportOf(toolUseResult: unknown): {
  summary?: string;
  usage?: TurnUsage;
  facts: NativeSubagentFacts;
} {
  if (typeof toolUseResult !== "object" || toolUseResult === null) return { facts: {} };
  const result = toolUseResult as {
    content?: unknown;
    resolvedModel?: unknown;
    agentType?: unknown;
    usage?: Partial<Record<string, unknown>>;
  };
  const texts = contentBlocks(result.content).filter(isTextBlock);
  const summary = texts.length > 0 ? texts.map((block) => block.text).join("\n") : undefined;
  const usage: Record<string, number> = {};
  for (const [key, figure] of [
    ["input_tokens", "inputTokens"],
    ["output_tokens", "outputTokens"],
    ["cache_read_input_tokens", "cacheReadInputTokens"],
    ["cache_creation_input_tokens", "cacheCreationInputTokens"],
  ] as const) {
    const value = result.usage?.[key];
    if (typeof value === "number") usage[figure] = value;
  }
  const facts: NativeSubagentFacts = {
    ...(typeof result.resolvedModel === "string" ? { model: result.resolvedModel } : {}),
    ...(typeof result.agentType === "string" ? { agentType: result.agentType } : {}),
  };
  return {
    ...(summary !== undefined ? { summary } : {}),
    ...(Object.keys(usage).length > 0 ? { usage } : {}),
    facts,
  };
}

/** The figures of one model's usage. */
function modelFigures(usage: Partial<ModelUsage>): Omit<TurnUsage, "byModel"> {
  return {
    ...(typeof usage.inputTokens === "number" ? { inputTokens: usage.inputTokens } : {}),
    ...(typeof usage.outputTokens === "number" ? { outputTokens: usage.outputTokens } : {}),
    ...(typeof usage.cacheReadInputTokens === "number" ? { cacheReadInputTokens: usage.cacheReadInputTokens } : {}),
    ...(typeof usage.cacheCreationInputTokens === "number"
      ? { cacheCreationInputTokens: usage.cacheCreationInputTokens }
      : {}),
    // Thinking tokens are already inside outputTokens, as the spec's reasoning tokens are.
    ...(typeof usage.thinkingTokens === "number" ? { reasoningOutputTokens: usage.thinkingTokens } : {}),
    ...(typeof usage.costUSD === "number" ? { costUsd: usage.costUSD } : {}),
  };
}

/**
 * The usage of one Claude turn from its `result`. Tokens come from `usage` (the main loop, per
 * turn). Cost and the per-model figures come from `model_usage_since_last_result`, which
 * Claude Code 2.1.332 adds to every result (undeclared in the SDK's types): `total_cost_usd`
 * and `modelUsage` are running totals of the whole query (of the whole transcript after a
 * resume), so they cannot be read per turn. Without it, cost is left out.
 */
export function turnUsageOf(result: SDKResultMessage): TurnUsage {
  const usage = result.usage as Partial<Record<string, unknown>> | undefined;
  const number = (key: string): number | undefined =>
    typeof usage?.[key] === "number" ? (usage[key] as number) : undefined;
  const figures: Record<string, number> = {};
  for (const [key, figure] of [
    ["input_tokens", "inputTokens"],
    ["output_tokens", "outputTokens"],
    ["cache_read_input_tokens", "cacheReadInputTokens"],
    ["cache_creation_input_tokens", "cacheCreationInputTokens"],
  ] as const) {
    const value = number(key);
    if (value !== undefined) figures[figure] = value;
  }
  const sinceLast = (result as { model_usage_since_last_result?: unknown }).model_usage_since_last_result;
  if (typeof sinceLast !== "object" || sinceLast === null) return figures;
  const byModel: Record<string, Omit<TurnUsage, "byModel">> = {};
  let cost: number | undefined;
  let thinking: number | undefined;
  const models = Object.entries(sinceLast as Record<string, Partial<ModelUsage>>);
  for (const [model, modelUsage] of models) {
    byModel[model] = modelFigures(modelUsage);
    if (typeof modelUsage.costUSD === "number") cost = (cost ?? 0) + modelUsage.costUSD;
  }
  // The turn's thinking tokens only when every model counted them (an older CLI leaves them out).
  if (models.length > 0 && models.every(([, modelUsage]) => typeof modelUsage.thinkingTokens === "number")) {
    thinking = models.reduce((sum, [, modelUsage]) => sum + modelUsage.thinkingTokens!, 0);
  }
  // No model's cost: the cost is unknown (the host prices or flags it), not $0.
  return {
    ...figures,
    ...(thinking !== undefined ? { reasoningOutputTokens: thinking } : {}),
    ...(cost !== undefined ? { costUsd: cost } : {}),
    byModel,
  };
}

/** How a Claude `result` ends a turn. */
export function terminalOf(
  result: SDKResultMessage,
  interruptRequested: boolean,
): { status: TurnTerminalStatus; error?: ProviderTurnError } {
  const reason = (result as { terminal_reason?: string }).terminal_reason;
  if (result.subtype === "success") {
    if (!result.is_error) return { status: "completed" };
    return {
      status: "failed",
      error: { code: reason ?? "error_result", message: result.result || "Claude Code reported an error." },
    };
  }
  // `interrupt()` ends the turn `error_during_execution` with `aborted_streaming` (during a model
  // call) or `aborted_tools` (during a tool): an interrupt, not a failure.
  if (interruptRequested || reason === "aborted_streaming" || reason === "aborted_tools")
    return { status: "interrupted" };
  const errors = (result as { errors?: readonly string[] }).errors ?? [];
  const message =
    errors.filter((line) => !line.startsWith("[ede_diagnostic]")).join("\n") ||
    `Claude Code ended the turn with ${result.subtype}${reason ? ` (${reason})` : ""}.`;
  return { status: "failed", error: { code: result.subtype, message } };
}

/**
 * One host turn over a Claude query: the user message that started it, plus every message
 * steered into it, until Claude Code has answered all of them. A steer that arrives during a
 * tool call is folded into Claude's running turn; one that arrives during a text-only reply is
 * run by Claude right after it, as a turn of its own with its own `result`. The host sees one
 * turn either way: it ends when a `result` has consumed the last of its messages.
 */
export class ClaudeTurn {
  readonly ledger: TurnLedger;
  /** Switchyard asked for this turn to stop. */
  interruptRequested = false;
  /** Ends the turn if Claude Code does not after an interrupt. */
  interruptTimer: NodeJS.Timeout | null = null;
  /** The uuids of this turn's user messages that no `result` has consumed yet. */
  readonly #unanswered = new Set<string>();
  /** Content blocks seen per API message id, so each block gets a stable item id. */
  readonly #blocksSeen = new Map<string, number>();
  /** Stream-event block index → item id of the message being streamed. */
  readonly #streaming = new Map<number, string>();
  #streamingMessageId: string | null = null;
  /** A sub-agent's agent id (`task_started`'s `task_id`) → the `Agent` call that spawned it. */
  readonly #agentCalls = new Map<string, string>();
  /** Claude's own sub-agents of this turn, by the id of the `Agent` tool call that spawned each. */
  readonly #subagents: NativeSubagentBook;

  constructor(turnId: string, emit: (event: AdapterEvent) => void, requests: RuntimeRequestBook<any>) {
    this.ledger = new TurnLedger(turnId, emit, requests);
    this.#subagents = new NativeSubagentBook(turnId, emit);
  }

  get turnId(): string {
    return this.ledger.turnId;
  }

  get terminated(): boolean {
    return this.ledger.terminated;
  }

  /** A user message of this turn was pushed to Claude Code. */
  expect(uuid: string): void {
    this.#unanswered.add(uuid);
  }

  /** True when this turn is waiting for Claude to answer the message with this uuid. */
  owns(uuid: string): boolean {
    return this.#unanswered.has(uuid);
  }

  /** A partial assistant message (`includePartialMessages`): text and thinking deltas. */
  onStreamEvent(message: SDKPartialAssistantMessage): void {
    if (message.parent_tool_use_id !== null) return;
    const event = message.event as {
      type: string;
      index?: number;
      message?: { id?: string };
      delta?: { type?: string; text?: string; thinking?: string };
    };
    if (event.type === "message_start") {
      this.#streamingMessageId = event.message?.id ?? null;
      this.#streaming.clear();
      return;
    }
    if (event.type !== "content_block_delta" || this.#streamingMessageId === null || event.index === undefined) return;
    const itemId = `${this.#streamingMessageId}:${event.index}`;
    if (event.delta?.type === "text_delta" && typeof event.delta.text === "string")
      this.ledger.messageDelta(itemId, event.delta.text);
    else if (event.delta?.type === "thinking_delta" && typeof event.delta.thinking === "string")
      this.ledger.reasoningDelta(itemId, event.delta.thinking);
  }

  /**
   * A whole assistant message: each of its blocks completes an item. With partial messages on,
   * Claude Code sends one assistant message per content block, so block `n` of API message `m`
   * is item `m:n`, the same id its deltas streamed under.
   */
  onAssistant(message: SDKAssistantMessage): void {
    if (message.parent_tool_use_id !== null) {
      this.#subagentTranscript(message.parent_tool_use_id, "assistant", message.message.content, message.uuid);
      return;
    }
    const apiMessage = message.message as { id?: string; content?: unknown };
    const messageId = apiMessage.id ?? message.uuid;
    let index = this.#blocksSeen.get(messageId) ?? 0;
    for (const block of contentBlocks(apiMessage.content)) {
      const itemId = `${messageId}:${index++}`;
      if (isTextBlock(block)) this.ledger.messageCompleted(itemId, block.text);
      else if (isThinkingBlock(block)) this.ledger.reasoningCompleted(itemId, block.thinking);
      else if (isToolUseBlock(block)) this.onToolUse(block.id, block.name, block.input);
    }
    this.#blocksSeen.set(messageId, index);
  }

  private onToolUse(id: string, name: string, input: unknown): void {
    this.ledger.closeText();
    const mcp = parseMcpToolName(name);
    this.ledger.toolStarted({
      itemId: id,
      kind: toolKindOf(name),
      name,
      title: toolTitleOf(name, input),
      ...(mcp !== null ? { server: mcp.server } : {}),
      ...(input !== undefined ? { input } : {}),
    });
    if (SUBAGENT_TOOLS.has(name)) this.#subagents.spawned(id, { parentItemId: id, ...subagentFactsOf(input) });
  }

  /**
   * A user message from Claude Code's side: tool results (the interrupt marker and echoes are
   * skipped). One under a `parent_tool_use_id` is a sub-agent's, its instructions: transcript.
   */
  onUser(message: SDKUserMessage): void {
    if (message.parent_tool_use_id !== null) {
      this.#subagentTranscript(message.parent_tool_use_id, "user", message.message.content, message.uuid ?? "");
      return;
    }
    for (const block of contentBlocks(message.message.content)) {
      if (!isToolResultBlock(block)) continue;
      const output = toolResultText(block);
      this.ledger.toolCompleted(block.tool_use_id, block.is_error === true ? "failed" : "completed", output);
      if (this.#subagents.isOpen(block.tool_use_id)) {
        const report = subagentReportOf((message as { tool_use_result?: unknown }).tool_use_result);
        this.#subagents.finished(
          block.tool_use_id,
          {
            status: block.is_error === true ? "failed" : "completed",
            summary: report.summary ?? output,
            ...(report.usage !== undefined ? { usage: report.usage } : {}),
          },
          report.facts,
        );
      }
    }
  }

  /**
   * A system message: `task_started` tells what Claude Code made of an `Agent` call (its agent
   * type and prompt as resolved); the tool's result, not `task_notification`, ends it, since it
   * carries the usage.
   */
  onSystem(message: {
    subtype?: string;
    task_id?: string;
    tool_use_id?: string;
    subagent_type?: string;
    prompt?: string;
  }): void {
    if (message.subtype !== "task_started" || message.tool_use_id === undefined) return;
    if (message.task_id !== undefined) this.#agentCalls.set(message.task_id, message.tool_use_id);
    this.#subagents.update(message.tool_use_id, {
      ...(message.subagent_type !== undefined ? { agentType: message.subagent_type } : {}),
      ...(message.prompt !== undefined ? { task: message.prompt } : {}),
    });
  }

  /**
   * Who asks, for a `canUseTool` call: one made inside a sub-agent names its agent id, reported
   * as the sub-agent's native id (its `Agent` call's id).
   */
  requestOriginOf(agentId: string | undefined): { subagentNativeId?: string } {
    const call = agentId !== undefined ? this.#agentCalls.get(agentId) : undefined;
    return call !== undefined ? { subagentNativeId: call } : {};
  }

  #subagentTranscript(parentToolUseId: string, role: "user" | "assistant", content: unknown, uuid: string): void {
    // Without a uuid the book numbers the messages itself.
    let index = 0;
    for (const block of contentBlocks(content)) {
      if (isTextBlock(block))
        this.#subagents.message(parentToolUseId, role, block.text, uuid !== "" ? `${uuid}:${index}` : undefined);
      index++;
    }
  }

  /**
   * A `result`: Claude Code finished one of its turns. Returns true when that answered every
   * message of this host turn (the turn is over), false when a steered message is still to come
   * or the result answered none of this turn's messages (a background task's, say).
   */
  onResult(result: SDKResultMessage): boolean {
    const named = (result as { user_message_uuids?: readonly string[] }).user_message_uuids;
    const single = (result as { user_message_uuid?: string }).user_message_uuid;
    const consumed = [...(named ?? []), ...(single !== undefined ? [single] : [])];
    // A CLI that names no uuids at all (older than 2.1.3xx) answers one message per result.
    if (consumed.length > 0 && !consumed.some((uuid) => this.#unanswered.has(uuid))) return false;
    this.ledger.addUsage(turnUsageOf(result));
    for (const uuid of consumed) this.#unanswered.delete(uuid);
    if (consumed.length === 0) this.#unanswered.clear();
    return this.#unanswered.size === 0;
  }

  /**
   * True while Claude still holds messages of this turn after an interrupt: a steer Claude had
   * queued behind a text-only reply survives `interrupt()` (it is in `still_queued`) and runs as
   * a turn of its own, which the session interrupts too.
   */
  get leftoverAfterInterrupt(): boolean {
    return this.interruptRequested && this.#unanswered.size > 0;
  }

  /** Ends the turn once (the ledger settles what is still open). */
  finish(status: TurnTerminalStatus, error?: ProviderTurnError): boolean {
    if (this.interruptTimer !== null) clearTimeout(this.interruptTimer);
    this.#subagents.closeOpen();
    return this.ledger.finish(status, error);
  }
}
