import type {
  AdapterEvent,
  ProviderTurnError,
  ToolCallStartedEvent,
  TurnTerminalEvent,
  TurnTerminalStatus,
  TurnUsageReport,
} from "@switchyard/spec";
import type { RuntimeRequestBook } from "./runtime-request-book.js";

/** What a turn used (the spec's {@link TurnUsageReport}): tokens, cache and reasoning tokens, cost, per model. @public */
export type TurnUsage = TurnUsageReport;

type UsageFigures = Omit<TurnUsageReport, "byModel">;
const FIGURES = [
  "inputTokens",
  "outputTokens",
  "cacheReadInputTokens",
  "cacheCreationInputTokens",
  "reasoningOutputTokens",
  "costUsd",
] as const;

/** Adds two sets of figures; a figure neither side reported stays absent. */
function addFigures(current: UsageFigures, more: UsageFigures): UsageFigures {
  const sum: Record<string, number> = {};
  for (const figure of FIGURES) {
    if (current[figure] === undefined && more[figure] === undefined) continue;
    sum[figure] = (current[figure] ?? 0) + (more[figure] ?? 0);
  }
  return sum;
}

/** Adds two usage reports, figure by figure and model by model. @public */
export function addUsage(current: TurnUsage, more: TurnUsage): TurnUsage {
  const figures = addFigures(current, more);
  if (current.byModel === undefined && more.byModel === undefined) return figures;
  const byModel: Record<string, UsageFigures> = { ...current.byModel };
  for (const [model, usage] of Object.entries(more.byModel ?? {}))
    byModel[model] = addFigures(byModel[model] ?? {}, usage);
  return { ...figures, byModel };
}

/** A tool call as a session starts it (the ledger adds `type` and `turnId`). @public */
export type ToolCallStart = Omit<ToolCallStartedEvent, "type" | "turnId">;

interface ToolState {
  done: boolean;
  declined: boolean;
}

/**
 * The bookkeeping of one turn, the same for every provider, so the same interrupt yields the
 * same items everywhere. It reports the turn's events with the host's turn id and remembers
 * what is still open; `finish` settles all of it, exactly once, by the spec's rule:
 * - an assistant message or reasoning item still open when the turn completes is complete (some
 *   protocols, ACP among them, mark a message's end only by the turn's); one still open when the
 *   turn ends any other way was cut off, and is left to the host, which keeps the text it
 *   streamed as a partial item (`data.partial`), so a reader can tell a cut-off answer from a
 *   whole one;
 * - a tool call that never finished ends `declined` if the user declined it, `completed` if the
 *   turn completed, else `failed`;
 * - the turn's pending runtime requests are cancelled;
 * - one `turn.terminal`, with the usage seen.
 * After `finish`, every call is ignored: late events of an ended turn never leak into the next.
 * @public
 */
export class TurnLedger {
  #started = false;
  #terminal: TurnTerminalEvent | null = null;
  readonly #messages = new Map<string, string>();
  readonly #reasoning = new Map<string, string>();
  readonly #tools = new Map<string, ToolState>();
  #usage: TurnUsage | null = null;
  #lastAssistantText = "";
  #itemCounter = 0;
  #markEnded!: (event: TurnTerminalEvent) => void;
  /** Settles with the terminal event once the turn ended. */
  readonly ended = new Promise<TurnTerminalEvent>((resolve) => (this.#markEnded = resolve));

  constructor(
    /** The host's turn id. */
    readonly turnId: string,
    private readonly emit: (event: AdapterEvent) => void,
    /** The session's runtime requests; the turn's own are cancelled when it ends. */
    private readonly requests: RuntimeRequestBook<any> | null = null,
  ) {}

  /** `turn.started` was reported. */
  get started(): boolean {
    return this.#started;
  }

  /** The turn has ended. */
  get terminated(): boolean {
    return this.#terminal !== null;
  }

  /** The text of the newest assistant message that had any. */
  get lastAssistantText(): string {
    return this.#lastAssistantText;
  }

  /** A fresh item id for providers that do not name their items (`message-1`, `reasoning-2`). */
  newItemId(prefix: string): string {
    return `${prefix}-${++this.#itemCounter}`;
  }

  /** Reports `turn.started` once. */
  start(providerTurnId?: string): void {
    if (this.#started || this.terminated) return;
    this.#started = true;
    this.emit({
      type: "turn.started",
      turnId: this.turnId,
      ...(providerTurnId !== undefined ? { providerTurnId } : {}),
    });
  }

  /** Appends assistant text to a message (opening it). */
  messageDelta(itemId: string, text: string): void {
    if (this.terminated || text === "") return;
    this.#messages.set(itemId, (this.#messages.get(itemId) ?? "") + text);
    this.emit({ type: "message.delta", turnId: this.turnId, itemId, text });
  }

  /** Completes a message; `text` (when given and not empty) is authoritative over the deltas. */
  messageCompleted(itemId: string, text?: string): void {
    if (this.terminated) return;
    const streamed = this.#messages.get(itemId) ?? "";
    this.#messages.delete(itemId);
    const whole = text !== undefined && text !== "" ? text : streamed;
    if (whole === "") return;
    this.#lastAssistantText = whole;
    this.emit({ type: "message.completed", turnId: this.turnId, itemId, text: whole });
  }

  /** The ids of messages still open. */
  get openMessageIds(): string[] {
    return [...this.#messages.keys()];
  }

  /** Appends reasoning text (opening the item). */
  reasoningDelta(itemId: string, text: string): void {
    if (this.terminated || text === "") return;
    this.#reasoning.set(itemId, (this.#reasoning.get(itemId) ?? "") + text);
    this.emit({ type: "reasoning.delta", turnId: this.turnId, itemId, text });
  }

  /** Completes a reasoning item; `text` (when not empty) is authoritative. */
  reasoningCompleted(itemId: string, text?: string): void {
    if (this.terminated) return;
    const streamed = this.#reasoning.get(itemId) ?? "";
    this.#reasoning.delete(itemId);
    const whole = text !== undefined && text !== "" ? text : streamed;
    if (whole !== "") this.emit({ type: "reasoning.completed", turnId: this.turnId, itemId, text: whole });
  }

  /** Closes every open message and reasoning item (a new step begins, a tool starts). */
  closeText(): void {
    for (const itemId of [...this.#reasoning.keys()]) this.reasoningCompleted(itemId);
    for (const itemId of [...this.#messages.keys()]) this.messageCompleted(itemId);
  }

  /** Starts a tool call once per item id. Returns false when it was already known. */
  toolStarted(start: ToolCallStart): boolean {
    if (this.terminated || this.#tools.has(start.itemId)) return false;
    this.#tools.set(start.itemId, { done: false, declined: false });
    this.emit({ type: "tool_call.started", turnId: this.turnId, ...start });
    return true;
  }

  /** True when the tool call was started and has not finished. */
  toolOpen(itemId: string): boolean {
    const tool = this.#tools.get(itemId);
    return tool !== undefined && !tool.done;
  }

  /** Records that the user declined a tool call: its failure is reported as `declined`. */
  declineTool(itemId: string): void {
    const tool = this.#tools.get(itemId);
    if (tool !== undefined) tool.declined = true;
    else this.#tools.set(itemId, { done: false, declined: true });
  }

  /** Finishes a started tool call once. A failure of a declined call is reported as `declined`. */
  toolCompleted(itemId: string, status: "completed" | "failed" | "declined", output?: string): void {
    if (this.terminated) return;
    const tool = this.#tools.get(itemId);
    if (tool === undefined || tool.done) return;
    tool.done = true;
    const reported = status === "failed" && tool.declined ? "declined" : status;
    this.emit({
      type: "tool_call.completed",
      turnId: this.turnId,
      itemId,
      status: reported,
      ...(output !== undefined ? { output } : {}),
    });
  }

  /** Adds to the turn's usage (providers that report per step), figure by figure and model by model. */
  addUsage(usage: TurnUsage): void {
    this.#usage = addUsage(this.#usage ?? {}, usage);
  }

  /** Replaces the turn's usage (providers that report running totals). */
  setUsage(usage: TurnUsage): void {
    this.#usage = { ...usage };
  }

  /**
   * Ends the turn by the rule above and reports its one terminal. Returns false (and does
   * nothing) when it had already ended.
   */
  finish(status: TurnTerminalStatus, error?: ProviderTurnError): boolean {
    if (this.terminated) return false;
    if (status === "completed") {
      this.closeText();
    } else {
      this.#messages.clear();
      this.#reasoning.clear();
    }
    for (const [itemId, tool] of this.#tools) {
      if (tool.done) continue;
      tool.done = true;
      const ending = tool.declined ? "declined" : status === "completed" ? "completed" : "failed";
      this.emit({ type: "tool_call.completed", turnId: this.turnId, itemId, status: ending });
    }
    this.requests?.cancelTurn(this.turnId, "cancelled");
    const terminal: TurnTerminalEvent = {
      type: "turn.terminal",
      turnId: this.turnId,
      status,
      ...(error !== undefined ? { error } : {}),
      ...(this.#usage !== null ? { usage: this.#usage } : {}),
    };
    this.#terminal = terminal;
    this.emit(terminal);
    this.#markEnded(terminal);
    return true;
  }
}
