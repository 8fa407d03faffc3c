import {
  EventSink,
  JsonLinesChannel,
  JsonRpcPeer,
  JsonRpcRequestError,
  RuntimeRequestBook,
  SwitchyardError,
  TurnLedger,
  type AdapterEvent,
  type IncomingNotification,
  type IncomingRequest,
  type InterruptInput,
  type OpenSessionInput,
  type PluginContext,
  type RuntimeRequestResponse,
  type StartableSession,
  type TurnInput,
} from "@switchyard/sdk";
import {
  CONVERSATION_NOT_FOUND,
  TEMPLATE_METHODS,
  type ApprovalRequestParams,
  type ApprovalRequestResult,
  type InitializeParams,
  type InitializeResult,
  type MessageCompletedParams,
  type MessageDeltaParams,
  type ToolCompletedParams,
  type ToolStartedParams,
  type TurnEndedParams,
  type TurnStartParams,
  type TurnStartResult,
} from "./template-wire.js";

/** How to start the harness for one session (the adapter builds it; the token is only in `env`). */
export interface TemplateLaunch {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

/** How long the harness may take to answer a request of ours. */
const REQUEST_TIMEOUT_MS = 30_000;

/** The turn in flight: the host's ledger, and the harness's id once `turn/start` answered. */
interface ActiveTurn {
  readonly ledger: TurnLedger;
  harnessTurnId: string | null;
  /** Settles when `turn/start` answered (or failed). */
  readonly accepted: Promise<void>;
  interrupting: boolean;
}

/**
 * One conversation: one long-lived harness process, spoken to over JSON-RPC. The kit does the
 * bookkeeping every provider shares, so this file only translates:
 * - `TurnLedger` holds each turn's open items and settles them at its end, exactly once;
 * - `RuntimeRequestBook` holds approvals: one resolution each, a dismissal is `cancelled`;
 * - `EventSink` drops everything after `close()`;
 * - `JsonLinesChannel` fails writes to a dead harness with `session_closed` and carries its stderr tail.
 */
export class TemplateSession implements StartableSession {
  readonly #input: OpenSessionInput;
  readonly #launch: TemplateLaunch;
  readonly #context: PluginContext;
  readonly #onClosed: () => void;
  readonly #sink: EventSink;
  readonly #requests: RuntimeRequestBook<{ readonly itemId: string }>;
  #peer: JsonRpcPeer | null = null;
  #conversationId: string | null;
  #turn: ActiveTurn | null = null;
  /** Harness turns that ended, so a late notification of one never reaches the next turn. */
  readonly #endedHarnessTurns = new Set<string>();
  #closing = false;

  constructor(input: OpenSessionInput, launch: TemplateLaunch, context: PluginContext, onClosed: () => void) {
    this.#input = input;
    this.#launch = launch;
    this.#context = context;
    this.#onClosed = onClosed;
    this.#sink = new EventSink(input.emit, context.logger);
    this.#requests = new RuntimeRequestBook(this.#sink.emit, "template-approval");
    this.#conversationId = input.resumeCursor;
  }

  /** The harness's conversation id; the host passes it back to resume. */
  get resumeCursor(): string | null {
    return this.#conversationId;
  }

  async start(): Promise<void> {
    const process = this.#context.process.spawn(this.#launch.command, this.#launch.args, {
      cwd: this.#input.cwd,
      env: this.#launch.env,
      // The launch environment is complete (harnessEnvironment): nothing else of the host leaks in.
      extendEnv: false,
      label: "template harness",
    });
    let peer: JsonRpcPeer | null = null;
    const channel = new JsonLinesChannel(process, {
      label: "template harness",
      logger: this.#context.logger,
      onMessage: (message) => peer?.receive(message),
    });
    peer = new JsonRpcPeer(channel, {
      jsonrpcField: true,
      onNotification: (notification) => this.#onNotification(notification),
      onRequest: (request) => this.#onRequest(request),
    });
    this.#peer = peer;
    channel.onClosed((error) => this.#onHarnessGone(error));
    const resuming = this.#conversationId;
    let opened: InitializeResult;
    try {
      opened = await peer.request<InitializeResult>(
        TEMPLATE_METHODS.initialize,
        { conversationId: resuming } satisfies InitializeParams,
        REQUEST_TIMEOUT_MS,
      );
    } catch (error) {
      if (error instanceof JsonRpcRequestError && error.rpcCode === CONVERSATION_NOT_FOUND) {
        throw new SwitchyardError(
          "not_found",
          `The harness no longer has conversation ${resuming ?? ""} (${error.message}); start a new thread or fork this one.`,
          { resumeCursor: resuming },
        );
      }
      throw error;
    }
    this.#conversationId = opened.conversationId;
    this.#sink.emit({ type: "session.resume_cursor", cursor: opened.conversationId });
  }

  async startTurn(input: TurnInput): Promise<{ providerTurnId?: string }> {
    const peer = this.#requirePeer();
    if (this.#turn !== null)
      throw new SwitchyardError(
        "conflict",
        `Turn ${this.#turn.ledger.turnId} is still running in this session; wait for it or interrupt it first.`,
      );
    let accept!: () => void;
    // The turn is over for this session the moment its terminal is reported, before the host
    // sees it: a next turn started from the host's handler must not find this one running.
    const emit = (event: AdapterEvent): void => {
      if (event.type === "turn.terminal") this.#forget(turn);
      this.#sink.emit(event);
    };
    const turn: ActiveTurn = {
      ledger: new TurnLedger(input.turnId, emit, this.#requests),
      harnessTurnId: null,
      accepted: new Promise((resolve) => (accept = resolve)),
      interrupting: false,
    };
    this.#turn = turn;
    const params: TurnStartParams = {
      text: input.text,
      // The one instruction channel: the host put everything the model must be told here
      // (because acceptsInstructions is declared) and nothing of it into `text`.
      instructions: input.instructions,
      model: input.model,
      approvals: input.runtimeMode === "full-access" ? "never" : "ask",
    };
    try {
      const { turnId } = await peer.request<TurnStartResult>(TEMPLATE_METHODS.turnStart, params, REQUEST_TIMEOUT_MS);
      turn.harnessTurnId ??= turnId;
      if (turn.ledger.terminated) this.#endedHarnessTurns.add(turnId);
      return { providerTurnId: turnId };
    } catch (error) {
      if (this.#turn === turn) this.#turn = null;
      // A refusal by the harness crosses the boundary typed, with its words.
      if (error instanceof JsonRpcRequestError)
        throw new SwitchyardError("provider_error", `The harness refused the turn: ${error.message}`, {
          rpcCode: error.rpcCode,
        });
      throw error;
    } finally {
      accept();
    }
  }

  async interruptTurn(input: InterruptInput): Promise<void> {
    const turn = this.#turn;
    if (turn === null || turn.ledger.turnId !== input.turnId) return;
    turn.interrupting = true;
    await turn.accepted;
    if (turn.harnessTurnId === null || turn.ledger.terminated) return;
    try {
      // The harness answers at once and then ends the turn `interrupted` itself.
      await this.#requirePeer().request(
        TEMPLATE_METHODS.turnInterrupt,
        { turnId: turn.harnessTurnId },
        REQUEST_TIMEOUT_MS,
      );
    } catch (error) {
      // A harness that cannot be told to stop is stopped: the exit ends the turn `interrupted`.
      this.#context.logger.warn("The harness did not take the interrupt; stopping it", {
        error: error instanceof Error ? error.message : String(error),
      });
      await this.#peer?.channel.stop(0, 2_000);
    }
  }

  async respondToRuntimeRequest(requestId: string, response: RuntimeRequestResponse): Promise<void> {
    // The book checks the id and the kind of answer, and resolves the request exactly once.
    this.#requests.respond(requestId, response);
  }

  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    this.#turn?.ledger.finish("interrupted", { message: "The session was closed." });
    this.#requests.cancelTurn(null, "cancelled");
    this.#sink.close();
    await this.#peer?.channel.stop();
    this.#onClosed();
  }

  #forget(turn: ActiveTurn): void {
    if (this.#turn === turn) this.#turn = null;
    if (turn.harnessTurnId !== null) this.#endedHarnessTurns.add(turn.harnessTurnId);
  }

  #requirePeer(): JsonRpcPeer {
    const peer = this.#peer;
    if (peer === null || peer.channel.closed) {
      throw (
        peer?.channel.closedError ??
        new SwitchyardError("session_closed", "The template harness is not running; the host reopens the session.")
      );
    }
    return peer;
  }

  /** The active turn, when a notification of harness turn `harnessTurnId` belongs to it. */
  #turnFor(harnessTurnId: string): ActiveTurn | null {
    const turn = this.#turn;
    if (turn === null || this.#endedHarnessTurns.has(harnessTurnId)) return null;
    // A notification can be read before the `turn/start` answer is: it names the turn first.
    turn.harnessTurnId ??= harnessTurnId;
    return turn.harnessTurnId === harnessTurnId ? turn : null;
  }

  #onNotification({ method, params }: IncomingNotification): void {
    const turnId = (params as { turnId?: unknown } | null)?.turnId;
    if (typeof turnId !== "string") return;
    const ledger = this.#turnFor(turnId)?.ledger;
    if (ledger === undefined) return;
    switch (method) {
      case TEMPLATE_METHODS.turnStarted:
        ledger.start(turnId);
        return;
      case TEMPLATE_METHODS.messageDelta: {
        const { itemId, text } = params as MessageDeltaParams;
        ledger.messageDelta(itemId, text);
        return;
      }
      case TEMPLATE_METHODS.messageCompleted: {
        const { itemId, text } = params as MessageCompletedParams;
        ledger.messageCompleted(itemId, text);
        return;
      }
      case TEMPLATE_METHODS.toolStarted: {
        const tool = params as ToolStartedParams;
        ledger.toolStarted({
          itemId: tool.itemId,
          kind: tool.tool === "shell" ? "command" : "mcp",
          name: tool.name,
          title: tool.title,
          ...(tool.server !== undefined ? { server: tool.server } : {}),
          ...(tool.input !== undefined ? { input: tool.input } : {}),
        });
        return;
      }
      case TEMPLATE_METHODS.toolCompleted: {
        const { itemId, status, output } = params as ToolCompletedParams;
        ledger.toolCompleted(itemId, status, output);
        return;
      }
      case TEMPLATE_METHODS.turnEnded: {
        const { status, error } = params as TurnEndedParams;
        ledger.finish(status, error);
        return;
      }
      default:
        this.#context.logger.debug("Ignored a harness notification", { method });
    }
  }

  async #onRequest({ method, params }: IncomingRequest): Promise<unknown> {
    if (method !== TEMPLATE_METHODS.approval)
      throw new JsonRpcRequestError(method, -32601, `The client does not answer ${method}.`);
    const { turnId, itemId, command } = params as ApprovalRequestParams;
    const turn = this.#turnFor(turnId);
    if (turn === null) return { decision: "cancel" } satisfies ApprovalRequestResult;
    const { outcome } = this.#requests.open(
      turn.ledger.turnId,
      { kind: "approval", approvalKind: "command", title: command },
      { itemId },
    );
    const settled = await outcome;
    // A dismissal, the turn's end or the session's close all tell the harness "cancel".
    if (settled.kind === "cancelled" || settled.response.kind !== "approval")
      return { decision: "cancel" } satisfies ApprovalRequestResult;
    const decision = settled.response.decision;
    if (decision === "decline") turn.ledger.declineTool(itemId);
    // The harness remembers no approvals, so "for the session" is one approval here.
    return { decision: decision === "accept_for_session" ? "accept" : decision } satisfies ApprovalRequestResult;
  }

  /** The harness exited: its turn fails with the stderr tail, unless we were stopping it. */
  #onHarnessGone(error: SwitchyardError): void {
    const turn = this.#turn;
    if (turn !== null) {
      if (turn.interrupting || this.#closing) turn.ledger.finish("interrupted");
      else turn.ledger.finish("failed", { message: error.message });
    }
    this.#requests.cancelTurn(null, "cancelled");
    if (!this.#closing)
      this.#sink.emit({ type: "session.exited", reason: error.message, error: { message: error.message } });
  }
}
