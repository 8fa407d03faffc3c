import {
  NativeSubagentBook,
  TurnLedger,
  addUsage,
  type AdapterEvent,
  type TurnUsage,
  type ProviderTurnError,
  type RuntimeRequestBook,
  type TurnTerminalStatus,
} from "@switchyard/sdk";
import { stepUsageOf } from "./opencode-usage.js";
import { taskResultOf, toolCallStart } from "./opencode-items.js";
import {
  ABORTED_ERROR_NAME,
  switchyardTurnIdOf,
  type Event,
  type OpenCodeError,
  type Part,
  type StepFinishPart,
  type ToolPart,
} from "./opencode-wire.js";
import { limitOfRetry } from "./opencode-limits.js";

/** The metadata on a prompt's text part: the host turn, and which prompt of that turn it is. */
export interface PromptMetadata {
  readonly switchyardTurnId: string;
  readonly switchyardPrompt: number;
  [key: string]: unknown;
}

/** Converts an OpenCode error into the provider error of a turn. */
export function providerErrorOf(
  error: OpenCodeError | { name?: string; data?: { message?: unknown } },
): ProviderTurnError {
  const data = (error as { data?: { message?: unknown } }).data;
  const message =
    typeof data?.message === "string" && data.message !== ""
      ? data.message
      : (error.name ?? "OpenCode reported an error");
  return { ...(error.name !== undefined ? { code: error.name } : {}), message };
}

/**
 * One host turn on an OpenCode session: the prompts it sent (the first and every steer), and
 * the events of the session (and of its `task` child sessions) mapped onto a {@link TurnLedger}.
 * The turn is over at the first `session.idle` that follows a `busy` status seen after every
 * prompt of the turn was taken into the conversation: a late idle of the turn before (an abort
 * sends two) or an idle reached just before a steer arrived never ends it.
 */
export class OpenCodeTurn {
  readonly ledger: TurnLedger;
  /** `session.abort` was sent for this turn. */
  interruptRequested = false;
  /** Ends the turn when OpenCode does not go idle after an abort. */
  interruptTimer: NodeJS.Timeout | null = null;
  #abortAgain = false;
  #abortRepeated = false;
  #sentPrompts = 0;
  readonly #acceptedPrompts = new Set<number>();
  /** The user messages of this turn's prompts (assistant messages answer them). */
  readonly #prompts = new Set<string>();
  #busyAfterAccept = false;
  #busyBeforePrompt = false;
  #error: ProviderTurnError | null = null;
  #aborted = false;
  readonly #partKinds = new Map<string, "text" | "reasoning">();
  /** Text and reasoning parts already completed (OpenCode may repeat a finished part). */
  readonly #completedParts = new Set<string>();
  /** Assistant message id → `provider/model` of the main session and its children. */
  readonly #assistantMessages = new Map<string, string | null>();
  /** Tool call id → the child session a `task` call runs in (its native id), once known. */
  readonly #taskSessions = new Map<string, string>();
  /** OpenCode's own sub-agents of this turn, by child session id. */
  readonly #subagents: NativeSubagentBook;
  /** What each child session spent, by child session id (already in the turn's own usage too). */
  readonly #childUsage = new Map<string, TurnUsage>();
  /**
   * Transcript of child sessions not known yet as a `task` call's: a child may speak before its
   * tool part names it. Handed to the book when it does; dropped with the turn otherwise.
   */
  readonly #earlyTranscript = new Map<string, { itemId: string; role: "user" | "assistant"; text: string }[]>();
  /** User message ids of child sessions (their text parts are a child's instructions). */
  readonly #childUserMessages = new Set<string>();

  constructor(
    readonly turnId: string,
    private readonly emit: (event: AdapterEvent) => void,
    requests: RuntimeRequestBook<any>,
    /** The OpenCode session the turn runs in. */
    private readonly sessionId: string,
    /** The configured MCP server keys (tool names are `<key>_<tool>`). */
    private readonly serverKeys: readonly string[],
  ) {
    this.ledger = new TurnLedger(turnId, emit, requests);
    this.#subagents = new NativeSubagentBook(turnId, emit);
  }

  /** Who asks, for a request of this session: a child session is a native sub-agent (its id is its native id). */
  requestOriginOf(sessionId: string): { subagentNativeId?: string } {
    return sessionId !== this.sessionId ? { subagentNativeId: sessionId } : {};
  }

  /** Ends the turn once: a sub-agent still open failed (its result never came), then the terminal. */
  finish(status: TurnTerminalStatus, error?: ProviderTurnError): void {
    if (this.ledger.terminated) return;
    this.#subagents.closeOpen();
    this.ledger.finish(status, error);
  }

  /** The metadata for the next prompt of this turn (the first, then every steer). */
  nextPrompt(): PromptMetadata {
    this.#sentPrompts += 1;
    this.#busyBeforePrompt = this.#busyAfterAccept;
    this.#busyAfterAccept = false;
    return { switchyardTurnId: this.turnId, switchyardPrompt: this.#sentPrompts };
  }

  /** OpenCode refused the prompt last handed out: the turn no longer waits for it. */
  promptRefused(metadata: PromptMetadata): void {
    if (metadata.switchyardPrompt !== this.#sentPrompts) return;
    this.#sentPrompts -= 1;
    // Its idle may have come meanwhile: the turn is as far as it was before.
    this.#busyAfterAccept ||= this.#busyBeforePrompt;
  }

  get terminated(): boolean {
    return this.ledger.terminated;
  }

  /** Applies one event of the turn's session or a child; returns true when the turn is over. */
  apply(event: Event): boolean {
    if (this.ledger.terminated) return false;
    switch (event.type) {
      case "message.updated": {
        const info = event.properties.info;
        if (info.sessionID !== this.sessionId && info.role === "user") this.#childUserMessages.add(info.id);
        if (info.role !== "assistant") return false;
        // In the turn's own session only answers to this turn's prompts count: the aborted
        // answer of the turn before is updated once more after its idle.
        if (info.sessionID === this.sessionId && !this.#prompts.has(info.parentID)) return false;
        this.#assistantMessages.set(
          info.id,
          info.providerID && info.modelID ? `${info.providerID}/${info.modelID}` : null,
        );
        if (info.sessionID === this.sessionId && info.error !== undefined) this.#recordError(info.error);
        if (info.sessionID !== this.sessionId && info.providerID && info.modelID)
          this.#subagents.update(info.sessionID, { model: `${info.providerID}/${info.modelID}` });
        return false;
      }
      case "message.part.updated":
        this.#part(event.properties.part);
        return false;
      case "message.part.delta": {
        const { sessionID, partID, field, delta } = event.properties;
        if (sessionID !== this.sessionId || field !== "text") return false;
        const kind = this.#partKinds.get(partID);
        if (kind === "text") this.ledger.messageDelta(partID, delta);
        else if (kind === "reasoning") this.ledger.reasoningDelta(partID, delta);
        return false;
      }
      case "session.status": {
        if (event.properties.sessionID !== this.sessionId) return false;
        const status = event.properties.status;
        if (status.type === "busy" && this.#allAccepted()) this.#busyAfterAccept = true;
        if (status.type === "busy" && this.interruptRequested && !this.#abortRepeated) this.#abortAgain = true;
        if (status.type === "retry") {
          // A used-up quota or a lasting capacity limit is reported as such: the host then fails
          // the turn instead of leaving it retrying with the failure only in its timeline.
          const limit = limitOfRetry(status.message, status.attempt);
          this.emit({
            type: "warning",
            turnId: this.turnId,
            message: `OpenCode retries the model request (attempt ${status.attempt}): ${status.message}`,
            ...(limit !== undefined ? { limit } : {}),
          });
        }
        return false;
      }
      case "session.error": {
        const { sessionID, error } = event.properties;
        if (sessionID === this.sessionId && error !== undefined && this.#acceptedPrompts.size > 0)
          this.#recordError(error);
        return false;
      }
      case "session.idle":
        return event.properties.sessionID === this.sessionId && this.#allAccepted() && this.#busyAfterAccept;
      default:
        return false;
    }
  }

  /**
   * True once when the session went busy after `session.abort` was sent: the prompt was still
   * on its way when the abort came, which found nothing to stop, so it must be sent again.
   */
  takeAbortAgain(): boolean {
    if (!this.#abortAgain) return false;
    this.#abortAgain = false;
    this.#abortRepeated = true;
    return true;
  }

  /** How the turn ended, by what OpenCode reported. */
  outcome(): { readonly status: TurnTerminalStatus; readonly error?: ProviderTurnError } {
    if (this.interruptRequested || this.#aborted) return { status: "interrupted" };
    if (this.#error !== null) return { status: "failed", error: this.#error };
    return { status: "completed" };
  }

  /** Records that the user declined the tool call an approval was about. */
  declineTool(callId: string): void {
    this.ledger.declineTool(callId);
  }

  #allAccepted(): boolean {
    return this.#acceptedPrompts.size >= this.#sentPrompts;
  }

  #recordError(error: OpenCodeError | { name?: string; data?: { message?: unknown } }): void {
    if (error.name === ABORTED_ERROR_NAME) this.#aborted = true;
    else this.#error = providerErrorOf(error);
  }

  #part(part: Part): void {
    if (part.sessionID !== this.sessionId) {
      // A child session (a native sub-agent): what it cost counts for this turn (and for the
      // child's own figures); what it said is its transcript, not this turn's messages.
      if (part.type === "step-finish") {
        const usage = this.#usage(part);
        this.#childUsage.set(part.sessionID, addUsage(this.#childUsage.get(part.sessionID) ?? {}, usage));
      } else if (part.type === "text" && part.synthetic !== true && part.ignored !== true) {
        // A user part is whole when it comes; an assistant part once it has ended.
        const role = this.#childUserMessages.has(part.messageID) ? "user" : "assistant";
        if (role === "user" || part.time?.end !== undefined)
          this.#childTranscript(part.sessionID, { itemId: part.id, role, text: part.text });
      }
      return;
    }
    if (!this.#assistantMessages.has(part.messageID)) {
      if (part.type !== "text") return;
      if (switchyardTurnIdOf(part) === this.turnId && typeof part.metadata?.["switchyardPrompt"] === "number") {
        this.#acceptedPrompts.add(part.metadata["switchyardPrompt"]);
        this.#prompts.add(part.messageID);
        this.#busyAfterAccept = false;
        // The prompt is in the conversation: the turn has started, whichever of this event and
        // promptAsync's answer arrives first.
        this.ledger.start();
      }
      return;
    }
    switch (part.type) {
      case "text":
        if (part.synthetic === true || part.ignored === true || this.#completedParts.has(part.id)) return;
        this.#partKinds.set(part.id, "text");
        if (part.time?.end !== undefined) {
          this.#completedParts.add(part.id);
          this.ledger.messageCompleted(part.id, part.text);
        }
        return;
      case "reasoning":
        if (this.#completedParts.has(part.id)) return;
        this.#partKinds.set(part.id, "reasoning");
        if (part.time?.end !== undefined) {
          this.#completedParts.add(part.id);
          this.ledger.reasoningCompleted(part.id, part.text);
        }
        return;
      case "tool":
        this.#tool(part);
        return;
      case "step-finish":
        this.#usage(part);
        return;
      default:
        return;
    }
  }

  #tool(part: ToolPart): void {
    const state = part.state;
    if (state.status === "pending") return;
    const itemId = part.callID || part.id;
    this.ledger.toolStarted(
      toolCallStart(itemId, part.tool, state.input, "title" in state ? state.title : undefined, this.serverKeys),
    );
    if (part.tool === "task") this.#subagent(itemId, part);
    if (state.status === "completed") this.ledger.toolCompleted(itemId, "completed", state.output);
    else if (state.status === "error") this.ledger.toolCompleted(itemId, "failed", state.error);
  }

  /**
   * OpenCode's `task` tool runs a native sub-agent in a child session: shown, never owned. It is
   * reported once the tool part names the child session (its native id); the tool's end ends it.
   */
  #subagent(itemId: string, part: ToolPart): void {
    const state = part.state;
    const metadata = "metadata" in state ? state.metadata : undefined;
    const childSession =
      typeof metadata?.["sessionId"] === "string" ? metadata["sessionId"] : (this.#taskSessions.get(itemId) ?? null);
    const text = (key: string): string | undefined =>
      typeof state.input[key] === "string" && state.input[key] !== "" ? (state.input[key] as string) : undefined;
    const facts = {
      parentItemId: itemId,
      title: text("description") ?? "OpenCode sub-agent",
      ...(text("prompt") !== undefined ? { task: text("prompt") } : {}),
      ...(text("subagent_type") !== undefined ? { agentType: text("subagent_type") } : {}),
    };
    if (state.status === "running" && childSession === null) return;
    // A call that ends before it named its session is known by its tool call id.
    const nativeId = childSession ?? itemId;
    if (!this.#taskSessions.has(itemId)) {
      this.#taskSessions.set(itemId, nativeId);
      this.#subagents.spawned(nativeId, facts);
      for (const message of this.#earlyTranscript.get(nativeId) ?? [])
        this.#subagents.message(nativeId, message.role, message.text, message.itemId);
      this.#earlyTranscript.delete(nativeId);
    }
    if (state.status === "running") return;
    const usage = this.#childUsage.get(nativeId);
    this.#subagents.finished(nativeId, {
      status: state.status === "completed" ? "completed" : "failed",
      ...(state.status === "completed"
        ? { summary: taskResultOf(state.output) }
        : state.status === "error"
          ? { summary: state.error }
          : {}),
      ...(usage !== undefined ? { usage } : {}),
    });
  }

  #childTranscript(sessionId: string, message: { itemId: string; role: "user" | "assistant"; text: string }): void {
    if (this.#subagents.isOpen(sessionId)) {
      this.#subagents.message(sessionId, message.role, message.text, message.itemId);
      return;
    }
    if ([...this.#taskSessions.values()].includes(sessionId)) return; // ended: late text is not its transcript
    const early = this.#earlyTranscript.get(sessionId) ?? [];
    if (!early.some((known) => known.itemId === message.itemId)) early.push(message);
    this.#earlyTranscript.set(sessionId, early);
  }

  #usage(part: StepFinishPart): TurnUsage {
    const usage = stepUsageOf(part, this.#assistantMessages.get(part.messageID) ?? null);
    this.ledger.addUsage(usage);
    return usage;
  }
}
