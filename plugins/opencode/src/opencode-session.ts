import {
  EventSink,
  RuntimeRequestBook,
  SwitchyardError,
  type ForkInput,
  type InterruptInput,
  type OpenSessionInput,
  type PluginLogger,
  type RuntimeMode,
  type RuntimeRequestResponse,
  type SnapshotTurn,
  type StartableSession,
  type SteerInput,
  type ThreadSnapshot,
  type TurnInput,
} from "@switchyard/sdk";
import { withInstructions, withoutInstructions } from "./opencode-instructions.js";
import {
  approvalRequestOf,
  permissionReplyOf,
  questionAnswersOf,
  userInputRequestOf,
  type OpenCodeRequestHandle,
} from "./opencode-requests.js";
import { callOpenCode } from "./opencode-rest.js";
import type { OpenCodeServer } from "./opencode-server.js";
import { OpenCodeServerSlot, type OpenCodeServerDeps } from "./opencode-server-slot.js";
import { OpenCodeTurn, type PromptMetadata } from "./opencode-turn.js";
import {
  switchyardTurnIdOf,
  type Event,
  type Message,
  type Part,
  type PermissionRequest,
  type QuestionRequest,
} from "./opencode-wire.js";

/** What a session needs from its adapter. */
export interface OpenCodeSessionDeps extends OpenCodeServerDeps {
  /** Called once when the session closes. */
  readonly onClosed: () => void;
}

/** A model id as OpenCode takes it per prompt. */
function modelRef(model: string): { providerID: string; modelID: string } {
  const slash = model.indexOf("/");
  if (slash <= 0 || slash === model.length - 1) {
    throw new SwitchyardError(
      "invalid_input",
      `OpenCode names models "<provider>/<model>" (for example "anthropic/claude-sonnet-4-6"); "${model}" is not one.`,
      { model },
    );
  }
  return { providerID: model.slice(0, slash), modelID: model.slice(slash + 1) };
}

/** The text of a message's visible text parts. */
function textOf(parts: readonly Part[]): string {
  return parts
    .filter(
      (part): part is Extract<Part, { type: "text" }> =>
        part.type === "text" && part.synthetic !== true && part.ignored !== true,
    )
    .map((part) => part.text)
    .join("")
    .trim();
}

/**
 * One Switchyard provider session on OpenCode: its own `opencode serve` (so its MCP entry, and
 * the bearer token in it, serve this session alone), one OpenCode session (the resume cursor)
 * in the instance's shared db, and the server's event stream mapped onto host turns. The server
 * is replaceable: a new runtime mode, an abort OpenCode did not honour, or a lost event stream
 * restart it on the same conversation.
 */
export class OpenCodeProviderSession implements StartableSession {
  readonly #deps: OpenCodeSessionDeps;
  readonly #input: OpenSessionInput;
  readonly #logger: PluginLogger;
  readonly #sink: EventSink;
  readonly #requests: RuntimeRequestBook<OpenCodeRequestHandle>;
  readonly #servers: OpenCodeServerSlot;
  #runtimeMode: RuntimeMode;
  #model: string | null;
  /** The running turn's effort, as OpenCode's model variant (a steer keeps it); null: the model's default. */
  #effort: string | null = null;
  #sessionId: string | null;
  /** The session's `task` child sessions (native sub-agents), whose approvals belong to its turns. */
  readonly #children = new Set<string>();
  #turn: OpenCodeTurn | null = null;
  /**
   * The grant's orchestration instructions, still to be delivered: with the first turn of a new
   * conversation, in its prompt (so they stay in the conversation, as every other instruction).
   * A host that already put them into the turn's text is not repeated.
   */
  #orchestration: string | null;
  #closed = false;
  #exited: string | null = null;

  constructor(deps: OpenCodeSessionDeps, input: OpenSessionInput) {
    this.#deps = deps;
    this.#input = input;
    this.#logger = deps.context.logger.child({
      driver: "opencode",
      instanceId: deps.instance.id,
      providerSessionId: input.providerSessionId,
    });
    this.#sink = new EventSink(input.emit, this.#logger);
    this.#requests = new RuntimeRequestBook<OpenCodeRequestHandle>(this.#sink.emit, "opencode-request");
    this.#runtimeMode = input.runtimeMode;
    this.#model = input.model;
    this.#sessionId = input.resumeCursor;
    const orchestration = input.mcp?.instructions.trim() ?? "";
    this.#orchestration = input.resumeCursor === null && orchestration !== "" ? orchestration : null;
    this.#servers = new OpenCodeServerSlot(deps, input, this.#logger, {
      runtimeMode: () => this.#runtimeMode,
      resumed: () => this.#sessionId !== null,
      closed: () => this.#closed,
      onEvent: (server, event) => this.#onEvent(server, event),
      onLost: (server, reason) => this.#onLost(server, reason),
    });
  }

  /** The OpenCode session id: what reopens this conversation on any later server. */
  get resumeCursor(): string | null {
    return this.#sessionId;
  }

  /** The pid of the session's `opencode serve` (diagnostics and tests). */
  get serverPid(): number | null {
    return this.#servers.current?.process.pid ?? null;
  }

  /** The base URL of the session's `opencode serve` (diagnostics and tests). */
  get serverUrl(): string | null {
    return this.#servers.current?.process.url ?? null;
  }

  /** Starts the server and opens (or reopens) the OpenCode session. */
  async start(): Promise<void> {
    if (this.#input.interactionMode !== "default") {
      this.#sink.emit({
        type: "warning",
        message: `OpenCode is driven without a "${this.#input.interactionMode}" mode here; the session runs in its default agent.`,
      });
    }
    if (this.#model !== null) modelRef(this.#model);
    const server = await this.#servers.ensure();
    const timeout = this.#deps.options.requestTimeoutMs;
    if (this.#sessionId !== null) {
      const existing = await callOpenCode(
        "session.get",
        (signal) => server.client.session.get({ sessionID: this.#sessionId! }, { signal }),
        timeout,
      ).catch((error: unknown) => {
        if (error instanceof SwitchyardError && error.code === "not_found") {
          throw new SwitchyardError(
            "not_found",
            `The OpenCode session "${this.#sessionId}" is not in this instance's database any more, so the conversation cannot be reopened.`,
            {
              resumeCursor: this.#sessionId,
            },
          );
        }
        throw error;
      });
      this.#logger.info("opencode session resumed", { sessionId: existing.id });
      return;
    }
    const created = await callOpenCode(
      "session.create",
      (signal) => server.client.session.create({ title: `Switchyard ${this.#input.threadId}` }, { signal }),
      timeout,
    );
    this.#sessionId = created.id;
    this.#sink.emit({ type: "session.resume_cursor", cursor: created.id });
  }

  // ---------------------------------------------------------------------------------------
  // The server (its lifecycle is the slot's)

  /** The server ended unasked (it crashed, its event stream broke): the session is over. */
  #onLost(server: OpenCodeServer, reason: string): void {
    if (this.#closed || !this.#servers.lose(server)) return;
    this.#exited = reason;
    this.#logger.warn("opencode serve lost", { reason });
    const turn = this.#turn;
    if (turn !== null && !turn.terminated) this.#endTurn(turn, "failed", { code: "opencode_exited", message: reason });
    this.#requests.cancelTurn(null, "cancelled");
    this.#sink.emit({ type: "session.exited", reason, error: { code: "opencode_exited", message: reason } });
  }

  // ---------------------------------------------------------------------------------------
  // Events (one stream per server, in order)

  #onEvent(server: OpenCodeServer, event: Event): void {
    if (this.#closed || server !== this.#servers.current || this.#sessionId === null) return;
    if (event.type === "session.created") {
      const parent = event.properties.info.parentID;
      if (parent !== undefined && (parent === this.#sessionId || this.#children.has(parent)))
        this.#children.add(event.properties.info.id);
      return;
    }
    if (event.type === "permission.asked") {
      if (this.#owns(event.properties.sessionID)) this.#onPermission(server, event.properties);
      return;
    }
    if (event.type === "question.asked") {
      if (this.#owns(event.properties.sessionID)) this.#onQuestion(server, event.properties as QuestionRequest);
      return;
    }
    const turn = this.#turn;
    if (turn === null || turn.terminated) return;
    if (!this.#owns(sessionOf(event))) return;
    if (turn.apply(event)) {
      const outcome = turn.outcome();
      this.#endTurn(turn, outcome.status, outcome.error);
      return;
    }
    if (turn.takeAbortAgain()) this.#abort(server, "again: the first came before the prompt ran");
  }

  #abort(server: OpenCodeServer, why: string): void {
    void callOpenCode(
      "session.abort",
      (signal) => server.client.session.abort({ sessionID: this.#sessionId! }, { signal }),
      this.#deps.options.requestTimeoutMs,
    ).catch((error: unknown) => this.#logger.warn("session.abort failed", { why, error: (error as Error).message }));
  }

  #owns(sessionId: string | undefined): boolean {
    return sessionId !== undefined && (sessionId === this.#sessionId || this.#children.has(sessionId));
  }

  #onPermission(server: OpenCodeServer, request: PermissionRequest): void {
    const turn = this.#turn;
    const reply = (answer: { reply: "once" | "always" | "reject"; message?: string }) =>
      void callOpenCode(
        "permission.reply",
        (signal) => server.client.permission.reply({ requestID: request.id, ...answer }, { signal }),
        this.#deps.options.requestTimeoutMs,
      ).catch((error: unknown) =>
        this.#logger.debug("answering an OpenCode permission failed", { error: (error as Error).message }),
      );
    if (turn === null || turn.terminated) {
      this.#sink.emit({
        type: "warning",
        message: `OpenCode asked for "${request.permission}" outside a turn; it was refused.`,
      });
      reply({ reply: "reject" });
      return;
    }
    const callId = request.tool?.callID ?? null;
    const { outcome } = this.#requests.open(
      turn.turnId,
      approvalRequestOf(request, this.#servers.mcpKeys),
      { kind: "permission", requestID: request.id, callID: callId },
      turn.requestOriginOf(request.sessionID),
    );
    void outcome.then((result) => {
      const answer = permissionReplyOf(result);
      // The user said no (a dismissal included); a request the turn's end cancelled is not a no.
      if (answer.reply === "reject" && callId !== null && (result.kind === "answered" || result.dismissed))
        turn.declineTool(callId);
      if (server === this.#servers.current) reply(answer);
    });
  }

  #onQuestion(server: OpenCodeServer, request: QuestionRequest): void {
    const turn = this.#turn;
    const reject = () =>
      void callOpenCode(
        "question.reject",
        (signal) => server.client.question.reject({ requestID: request.id }, { signal }),
        this.#deps.options.requestTimeoutMs,
      ).catch((error: unknown) =>
        this.#logger.debug("rejecting an OpenCode question failed", { error: (error as Error).message }),
      );
    if (turn === null || turn.terminated) {
      reject();
      return;
    }
    const mapped = userInputRequestOf(request);
    const { outcome } = this.#requests.open(turn.turnId, mapped.request, {
      kind: "question",
      requestID: request.id,
      questionIds: mapped.questionIds,
    });
    void outcome.then((result) => {
      if (server !== this.#servers.current) return;
      if (result.kind !== "answered" || result.response.kind !== "user_input") {
        reject();
        return;
      }
      const answers = questionAnswersOf(result.response.answers, mapped.questionIds);
      void callOpenCode(
        "question.reply",
        (signal) => server.client.question.reply({ requestID: request.id, answers }, { signal }),
        this.#deps.options.requestTimeoutMs,
      ).catch((error: unknown) =>
        this.#logger.debug("answering an OpenCode question failed", { error: (error as Error).message }),
      );
    });
  }

  #endTurn(
    turn: OpenCodeTurn,
    status: Parameters<OpenCodeTurn["ledger"]["finish"]>[0],
    error?: Parameters<OpenCodeTurn["ledger"]["finish"]>[1],
  ): void {
    if (turn.interruptTimer !== null) clearTimeout(turn.interruptTimer);
    turn.finish(status, error);
    if (this.#turn === turn) this.#turn = null;
  }

  // ---------------------------------------------------------------------------------------
  // Turns

  #assertOpen(): void {
    if (this.#closed)
      throw new SwitchyardError("session_closed", "The session is closed.", {
        providerSessionId: this.#input.providerSessionId,
      });
    if (this.#exited !== null) {
      throw new SwitchyardError(
        "session_closed",
        `opencode serve is gone (${this.#exited}); open a new session (it resumes the conversation).`,
        {
          providerSessionId: this.#input.providerSessionId,
        },
      );
    }
  }

  #activeTurn(turnId: string): OpenCodeTurn {
    const turn = this.#turn;
    if (turn === null || turn.terminated || turn.turnId !== turnId)
      throw new SwitchyardError("turn_not_active", `Turn "${turnId}" is not running.`, { turnId });
    return turn;
  }

  async #prompt(
    server: OpenCodeServer,
    turn: OpenCodeTurn,
    text: string,
    model: string | null,
    effort: string | null,
  ): Promise<void> {
    const metadata: PromptMetadata = turn.nextPrompt();
    try {
      await callOpenCode(
        "session.promptAsync",
        (signal) =>
          server.client.session.promptAsync(
            {
              sessionID: this.#sessionId!,
              ...(model !== null ? { model: modelRef(model) } : {}),
              ...(effort !== null ? { variant: effort } : {}),
              parts: [{ type: "text", text, metadata }],
            },
            { signal },
          ),
        this.#deps.options.requestTimeoutMs,
      );
    } catch (error) {
      turn.promptRefused(metadata);
      throw error;
    }
  }

  async startTurn(input: TurnInput): Promise<{ readonly providerTurnId?: string }> {
    this.#assertOpen();
    // After an interrupt the host may start the next turn before OpenCode went idle; the
    // interrupt grace timer bounds this wait.
    if (this.#turn !== null && !this.#turn.terminated && this.#turn.interruptRequested) await this.#turn.ledger.ended;
    this.#assertOpen();
    if (this.#turn !== null && !this.#turn.terminated) {
      throw new SwitchyardError(
        "conflict",
        `Turn "${this.#turn.turnId}" is still running; steer it or wait for it to end.`,
        { runningTurnId: this.#turn.turnId, turnId: input.turnId },
      );
    }
    if (input.interactionMode !== "default") {
      this.#sink.emit({
        type: "warning",
        turnId: input.turnId,
        message: `OpenCode is driven without a "${input.interactionMode}" mode here; the turn runs in its default agent.`,
      });
    }
    const model = input.model ?? this.#model;
    if (model !== null) modelRef(model);
    this.#model = model;
    this.#effort = input.effort ?? null;
    this.#runtimeMode = input.runtimeMode;
    // The runtime mode is the server's permission config: a new one needs a new server.
    if (this.#servers.current !== null && this.#servers.mode !== this.#runtimeMode)
      await this.#servers.retire("runtime mode change");
    const server = await this.#servers.ensure();
    this.#assertOpen();
    const turn = new OpenCodeTurn(
      input.turnId,
      this.#sink.emit,
      this.#requests,
      this.#sessionId!,
      this.#servers.mcpKeys,
    );
    this.#turn = turn;
    const orchestration =
      this.#orchestration !== null && !input.text.includes(this.#orchestration) ? this.#orchestration : null;
    const instructions = [orchestration, input.instructions]
      .filter((part): part is string => part !== null && part.trim() !== "")
      .join("\n\n");
    try {
      await this.#prompt(
        server,
        turn,
        withInstructions(input.text, instructions === "" ? null : instructions),
        model,
        this.#effort,
      );
    } catch (error) {
      // OpenCode may have taken the prompt before the request failed (a timeout): a turn that
      // was reported started still gets its one terminal.
      if (turn.ledger.started)
        this.#endTurn(turn, "failed", { code: "prompt_failed", message: (error as Error).message });
      if (this.#turn === turn) this.#turn = null;
      throw error;
    }
    this.#orchestration = null;
    turn.ledger.start();
    return {};
  }

  /**
   * A prompt sent while the turn runs. OpenCode takes it into the same turn: folded into the
   * next model request after a tool call, or answered right after a text-only step.
   */
  async steerTurn(input: SteerInput): Promise<void> {
    this.#assertOpen();
    const turn = this.#activeTurn(input.turnId);
    const server = this.#servers.current;
    if (server === null)
      throw new SwitchyardError("turn_not_active", `Turn "${input.turnId}" has no running OpenCode server.`, {
        turnId: input.turnId,
      });
    await this.#prompt(server, turn, input.text, this.#model, this.#effort);
  }

  /**
   * `session.abort`. OpenCode ends the run with a `MessageAbortedError` and goes idle; if it has
   * not after the grace period (short for a hard stop), the turn ends interrupted and the server
   * is restarted for the next turn.
   */
  async interruptTurn(input: InterruptInput): Promise<void> {
    this.#assertOpen();
    const turn = this.#activeTurn(input.turnId);
    turn.interruptRequested = true;
    this.#requests.cancelTurn(turn.turnId, "cancelled");
    const server = this.#servers.current;
    if (server === null) {
      this.#endTurn(turn, "interrupted");
      return;
    }
    this.#abort(server, "interrupt");
    const grace =
      input.hard === true ? Math.min(2_000, this.#deps.options.interruptGraceMs) : this.#deps.options.interruptGraceMs;
    if (turn.interruptTimer !== null) clearTimeout(turn.interruptTimer);
    turn.interruptTimer = setTimeout(() => {
      if (turn.terminated || this.#closed) return;
      this.#sink.emit({
        type: "warning",
        turnId: turn.turnId,
        message: `OpenCode did not go idle within ${grace} ms of session.abort; its server was restarted.`,
      });
      this.#endTurn(turn, "interrupted");
      void this.#servers.retire("interrupt timeout");
    }, grace);
    turn.interruptTimer.unref();
  }

  /**
   * `session.fork`. OpenCode keeps the messages before the message it is given, so a fork after
   * a host turn is cut at the first user message of a later turn (each prompt's part metadata
   * names its turn); after the last turn, or with no turn given, everything is copied.
   */
  async forkThread(input: ForkInput): Promise<{ readonly resumeCursor: string }> {
    this.#assertOpen();
    if (this.#turn !== null && !this.#turn.terminated) {
      throw new SwitchyardError("conflict", `Turn "${this.#turn.turnId}" is running; fork after it ends.`, {
        runningTurnId: this.#turn.turnId,
      });
    }
    const server = await this.#servers.ensure();
    const timeout = this.#deps.options.requestTimeoutMs;
    let messageID: string | undefined;
    if (input.afterTurnId !== undefined) {
      const messages = await callOpenCode(
        "session.messages",
        (signal) => server.client.session.messages({ sessionID: this.#sessionId! }, { signal }),
        timeout,
      );
      messageID = forkPoint(messages, input.afterTurnId);
    }
    const fork = await callOpenCode(
      "session.fork",
      (signal) =>
        server.client.session.fork(
          { sessionID: this.#sessionId!, ...(messageID !== undefined ? { messageID } : {}) },
          { signal },
        ),
      timeout,
    );
    return { resumeCursor: fork.id };
  }

  /** The conversation as OpenCode holds it: one entry per prompt, with the last answer to it. */
  async readSnapshot(): Promise<ThreadSnapshot> {
    this.#assertOpen();
    const server = await this.#servers.ensure();
    const messages = await callOpenCode(
      "session.messages",
      (signal) => server.client.session.messages({ sessionID: this.#sessionId! }, { signal }),
      this.#deps.options.requestTimeoutMs,
    );
    const turns: { userText: string; assistantText: string }[] = [];
    const byUser = new Map<string, { userText: string; assistantText: string }>();
    for (const message of messages) {
      if (message.info.role === "user") {
        const turn = { userText: withoutInstructions(textOf(message.parts)), assistantText: "" };
        turns.push(turn);
        byUser.set(message.info.id, turn);
      } else {
        const text = textOf(message.parts);
        const turn = byUser.get(message.info.parentID) ?? turns.at(-1);
        if (turn !== undefined && text !== "") turn.assistantText = text;
      }
    }
    return { turns: turns.map((turn): SnapshotTurn => ({ ...turn })) };
  }

  /** Answers an approval or a question OpenCode raised. */
  async respondToRuntimeRequest(requestId: string, response: RuntimeRequestResponse): Promise<void> {
    this.#requests.respond(requestId, response);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#sink.close();
    if (this.#turn?.interruptTimer) clearTimeout(this.#turn.interruptTimer);
    this.#requests.cancelTurn(null, "cancelled");
    await this.#servers.close();
    this.#deps.onClosed();
  }
}

/** The OpenCode session an event is about, when it names one. */
function sessionOf(event: Event): string | undefined {
  const properties = event.properties as {
    sessionID?: unknown;
    info?: { sessionID?: unknown };
    part?: { sessionID?: unknown };
  };
  const id = properties.sessionID ?? properties.info?.sessionID ?? properties.part?.sessionID;
  return typeof id === "string" ? id : undefined;
}

/**
 * The message a fork after `afterTurnId` keeps everything before: the first prompt of a later
 * host turn, or undefined to copy everything (the turn was the last). Fails `not_found`
 * when no message of the conversation belongs to the turn.
 */
export function forkPoint(
  messages: readonly { readonly info: Message; readonly parts: readonly Part[] }[],
  afterTurnId: string,
): string | undefined {
  let seen = false;
  for (const message of messages) {
    if (message.info.role !== "user") continue;
    const turnId =
      message.parts.map((part) => (part.type === "text" ? switchyardTurnIdOf(part) : null)).find((id) => id !== null) ??
      null;
    if (turnId === afterTurnId) seen = true;
    // Only a prompt of another host turn starts the cut: OpenCode's own user messages (a
    // compaction's) belong to the turn they happened in.
    else if (seen && turnId !== null) return message.info.id;
  }
  if (!seen)
    throw new SwitchyardError(
      "not_found",
      `Turn "${afterTurnId}" is not in this OpenCode conversation, so no fork can be cut after it.`,
      { afterTurnId },
    );
  return undefined;
}
