import { randomUUID } from "node:crypto";
import {
  EventSink,
  RuntimeRequestBook,
  SwitchyardError,
  harnessNotFoundMessage,
  sessionEnvironment,
  UnsupportedCapabilityError,
  type ForkInput,
  type InterruptInput,
  type OpenSessionInput,
  type PluginContext,
  type PluginLogger,
  type ProviderInstanceDescriptor,
  type RuntimeMode,
  type RuntimeRequestResponse,
  type StartableSession,
  type SteerInput,
  type ThreadSnapshot,
  type TurnInput,
} from "@switchyard/sdk";
import { claudeMcpOptions } from "./claude-mcp-config.js";
import { askedByProfile, claudeExtraMcpServers, claudeToolRuleOptions } from "./claude-tool-rules.js";
import type { ClaudeOptions } from "./claude-options.js";
import {
  ROOT_FULL_ACCESS_WARNING,
  approvalRequestOf,
  claudeModeSettings,
  permissionResultOf,
  type ClaudeModeSettings,
} from "./claude-permissions.js";
import { claudeProcessHandle, type ClaudeProcessHandle } from "./claude-process.js";
import { PromptStream } from "./claude-prompt-stream.js";
import type { ClaudeTranscripts } from "./claude-transcripts.js";
import { ClaudeTurn, terminalOf } from "./claude-turn.js";
import { findClaude } from "./claude-binary.js";
import {
  loadClaudeSdk,
  type CanUseTool,
  type ClaudeQuery,
  type ClaudeQueryOptions,
  type EffortLevel,
  type SDKMessage,
  type SDKUserMessage,
} from "./claude-wire.js";

/** What a session needs from its adapter. */
export interface ClaudeSessionDeps {
  readonly instance: ProviderInstanceDescriptor;
  readonly options: ClaudeOptions;
  readonly context: PluginContext;
  /** The complete harness environment (host, instance, `CLAUDE_CONFIG_DIR`). */
  readonly env: Readonly<Record<string, string>>;
  /** Claude Code accepts `bypassPermissions` with this environment. */
  readonly bypassAvailable: boolean;
  readonly transcripts: ClaudeTranscripts;
}

/** What a pending approval needs to be answered. */
interface PendingPermission {
  readonly toolUseId: string | null;
}

/** Claude's structured questions are not offered (`userInputQuestions` is false). */
const DISALLOWED_TOOLS = ["AskUserQuestion"];

function userMessage(text: string, uuid: string): SDKUserMessage {
  return {
    type: "user",
    message: { role: "user", content: text },
    parent_tool_use_id: null,
    uuid: uuid as SDKUserMessage["uuid"],
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * One Switchyard provider session over the Claude Agent SDK: one streaming-input `query()` (one
 * `claude` process) whose prompt is a stream the session owns. Each host turn pushes one user
 * message; steering pushes more into the running turn; the conversation lives in Claude's
 * transcript under `CLAUDE_CONFIG_DIR`, whose session id is the resume cursor.
 */
export class ClaudeProviderSession implements StartableSession {
  readonly #logger: PluginLogger;
  readonly #sink: EventSink;
  readonly #requests: RuntimeRequestBook<PendingPermission>;
  readonly #prompt = new PromptStream();
  #query: ClaudeQuery | null = null;
  #process: ClaudeProcessHandle | null = null;
  #reading: Promise<void> | null = null;
  #turn: ClaudeTurn | null = null;
  #cursor: string | null;
  #model: string | null;
  /** The effort level the session was last given (a turn's effort); null: Claude's default. */
  #effort: string | null = null;
  #runtimeMode: RuntimeMode;
  #warnedRootFullAccess = false;
  #closed = false;
  #exited = false;

  constructor(
    private readonly deps: ClaudeSessionDeps,
    private readonly input: OpenSessionInput,
    private readonly onClosed: () => void,
  ) {
    this.#logger = deps.context.logger.child({
      driver: "claude",
      instanceId: deps.instance.id,
      providerSessionId: input.providerSessionId,
    });
    this.#sink = new EventSink(input.emit, this.#logger);
    this.#requests = new RuntimeRequestBook<PendingPermission>(this.#sink.emit, "claude-permission");
    this.#cursor = input.resumeCursor;
    this.#model = input.model;
    this.#runtimeMode = input.runtimeMode;
  }

  /** Claude's session id (its transcript), once known. */
  get resumeCursor(): string | null {
    return this.#cursor;
  }

  /** The pid of the `claude` process (diagnostics and tests). */
  get processId(): number | null {
    return this.#process?.process?.pid ?? null;
  }

  #settings(): ClaudeModeSettings {
    return claudeModeSettings(this.#runtimeMode, this.deps.bypassAvailable);
  }

  #warnIfRootFullAccess(turnId?: string): void {
    if (this.#runtimeMode !== "full-access" || this.deps.bypassAvailable || this.#warnedRootFullAccess) return;
    this.#warnedRootFullAccess = true;
    this.#sink.emit({
      type: "warning",
      ...(turnId !== undefined ? { turnId } : {}),
      message: ROOT_FULL_ACCESS_WARNING,
    });
  }

  /** Starts `claude` (resuming the cursor's session, when given) and waits for its initialize answer. */
  async start(): Promise<void> {
    if (this.input.interactionMode !== "default") {
      this.#sink.emit({
        type: "warning",
        message: `The claude driver offers no "${this.input.interactionMode}" interaction mode; the session runs in its default mode.`,
      });
    }
    this.#warnIfRootFullAccess();
    const lookup = await findClaude(this.deps.options.claudePath, this.deps.context, this.deps.env);
    if (lookup.sdk.found === null)
      throw new SwitchyardError("provider_unavailable", harnessNotFoundMessage(lookup.sdk));
    if (lookup.binary === null)
      throw new SwitchyardError("provider_unavailable", harnessNotFoundMessage(lookup.search), {
        claudePath: this.deps.options.claudePath ?? null,
      });
    const sdk = await loadClaudeSdk(lookup.sdk);
    const handle = claudeProcessHandle(this.deps.context.process, "claude");
    this.#process = handle;
    const query = sdk.query({ prompt: this.#prompt, options: this.#queryOptions(handle, lookup.binary.path) });
    this.#query = query;
    this.#reading = this.#read(query);
    try {
      await withTimeout(query.initializationResult(), this.deps.options.startupTimeoutMs, "claude");
    } catch (error) {
      const reason = (error as Error).message;
      const missing =
        this.input.resumeCursor !== null && /no conversation found/i.test(`${reason}\n${handle.stderrText}`);
      throw new SwitchyardError(
        missing ? "not_found" : "provider_unavailable",
        missing
          ? `The Claude session "${this.input.resumeCursor}" no longer exists under this instance's CLAUDE_CONFIG_DIR, so the conversation cannot be reopened.`
          : handle.describe(`claude did not start: ${reason}`),
        { resumeCursor: this.input.resumeCursor, pid: handle.process?.pid ?? null },
      );
    }
    if (this.#closed) throw new SwitchyardError("session_closed", "The session was closed while claude was starting.");
    // Only whether MCP is configured: the server entry carries the session's token.
    this.#logger.info("claude started", {
      pid: handle.process?.pid ?? null,
      resumed: this.input.resumeCursor !== null,
      mcp: this.input.mcp !== null,
      model: this.#model,
    });
  }

  #queryOptions(handle: ClaudeProcessHandle, claude: string): ClaudeQueryOptions {
    const mcp = claudeMcpOptions(this.input.mcp);
    const rules = claudeToolRuleOptions(this.input.toolRules);
    return {
      cwd: this.input.cwd,
      // A profile's environment and CLAUDE_CONFIG_DIR (its harnessHome) over the instance's.
      env: sessionEnvironment(this.deps.env, this.input, "CLAUDE_CONFIG_DIR"),
      pathToClaudeCodeExecutable: claude,
      ...(this.#model !== null ? { model: this.#model } : {}),
      ...(this.input.resumeCursor !== null ? { resume: this.input.resumeCursor } : {}),
      includePartialMessages: true,
      permissionMode: this.#settings().permissionMode,
      // Lets a later turn switch to full access; the mode itself is set per turn.
      ...(this.deps.bypassAvailable ? { allowDangerouslySkipPermissions: true } : {}),
      canUseTool: this.#canUseTool,
      settings: rules.askSettings,
      disallowedTools: [...DISALLOWED_TOOLS, ...rules.disallowedTools],
      ...(mcp !== null ? mcp : {}),
      // A profile's servers first: Switchyard's own entry wins a name both use.
      mcpServers: { ...claudeExtraMcpServers(this.input.mcpServers), ...(mcp?.mcpServers ?? {}) },
      mcpServersDelivery: "initialize",
      ...(rules.tools !== null ? { tools: rules.tools } : {}),
      allowedTools: [...(mcp?.allowedTools ?? []), ...rules.allowedTools],
      spawnClaudeCodeProcess: handle.spawn,
    };
  }

  // ---------------------------------------------------------------------------------------
  // Messages from Claude Code

  async #read(query: ClaudeQuery): Promise<void> {
    let failure: Error | null = null;
    try {
      for await (const message of query) this.#onMessage(message);
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
    }
    this.#onQueryEnded(failure);
  }

  #onMessage(message: SDKMessage): void {
    if (this.#closed) return;
    const sessionId = (message as { session_id?: unknown }).session_id;
    if (
      message.type === "system" &&
      message.subtype === "init" &&
      typeof sessionId === "string" &&
      sessionId !== this.#cursor
    ) {
      this.#cursor = sessionId;
      this.#sink.emit({ type: "session.resume_cursor", cursor: sessionId });
    }
    const turn = this.#turn;
    if (turn === null || turn.terminated) return;
    // A steer that outlived the interrupt starts a turn of its own: stop that one too, when it
    // starts and again when its model call does (an interrupt between the two can be a no-op).
    if (
      turn.leftoverAfterInterrupt &&
      ((message.type === "system" && message.subtype === "init") ||
        (message.type === "stream_event" && message.event.type === "message_start"))
    ) {
      this.#interrupt("a steer queued before the interrupt");
    }
    switch (message.type) {
      case "stream_event":
        turn.onStreamEvent(message);
        return;
      case "assistant":
        turn.onAssistant(message);
        return;
      case "user":
        if ((message as { isReplay?: boolean }).isReplay !== true) turn.onUser(message as SDKUserMessage);
        return;
      case "system":
        turn.onSystem(message);
        return;
      case "result": {
        if (!turn.onResult(message)) return;
        const ending = terminalOf(message, turn.interruptRequested);
        this.#endTurn(turn, ending.status, ending.error);
        return;
      }
      default:
        return;
    }
  }

  #onQueryEnded(failure: Error | null): void {
    if (this.#closed || this.#exited) return;
    this.#exited = true;
    const reason =
      this.#process?.describe(`The claude process ended${failure !== null ? `: ${failure.message}` : "."}`) ??
      "The claude process ended.";
    this.#logger.warn("claude exited", { error: failure?.message ?? null });
    this.#requests.cancelTurn(null, "cancelled");
    const turn = this.#turn;
    if (turn !== null && !turn.terminated)
      this.#endTurn(turn, turn.interruptRequested ? "interrupted" : "failed", {
        code: "claude_exited",
        message: reason,
      });
    this.#sink.emit({
      type: "session.exited",
      reason,
      ...(failure !== null ? { error: { code: "claude_exited", message: reason } } : {}),
    });
  }

  #endTurn(
    turn: ClaudeTurn,
    status: Parameters<ClaudeTurn["finish"]>[0],
    error?: Parameters<ClaudeTurn["finish"]>[1],
  ): void {
    turn.finish(status, error);
    if (this.#turn === turn) this.#turn = null;
  }

  // ---------------------------------------------------------------------------------------
  // Permissions

  readonly #canUseTool: CanUseTool = async (toolName, input, options) => {
    // Full access allows every prompt, except a call the profile's ask rules name: that one asks the host.
    if (this.#settings().allowEverything && !askedByProfile(this.input.toolRules, toolName, input))
      return { behavior: "allow", updatedInput: input };
    const turn = this.#turn;
    if (turn === null || turn.terminated)
      return { behavior: "deny", message: "No Switchyard turn is running to ask in." };
    const toolUseId = options.toolUseID ?? null;
    const { requestId, outcome } = this.#requests.open(
      turn.turnId,
      approvalRequestOf({
        toolName,
        input,
        ...(options.title !== undefined ? { title: options.title } : {}),
        ...(options.description !== undefined ? { description: options.description } : {}),
        ...(options.decisionReason !== undefined ? { decisionReason: options.decisionReason } : {}),
        ...(options.blockedPath !== undefined ? { blockedPath: options.blockedPath } : {}),
      }),
      { toolUseId },
      turn.requestOriginOf(options.agentID),
    );
    // Claude withdraws the prompt when its turn is interrupted.
    const withdraw = () => this.#requests.cancel(requestId);
    options.signal.addEventListener("abort", withdraw, { once: true });
    const result = await outcome;
    options.signal.removeEventListener("abort", withdraw);
    if (
      toolUseId !== null &&
      result.kind === "answered" &&
      result.response.kind === "approval" &&
      (result.response.decision === "decline" || result.response.decision === "cancel")
    ) {
      turn.ledger.declineTool(toolUseId);
    }
    return permissionResultOf(result, input, options.suggestions);
  };

  // ---------------------------------------------------------------------------------------
  // Turns

  #assertOpen(): ClaudeQuery {
    if (this.#closed)
      throw new SwitchyardError("session_closed", "The session is closed.", {
        providerSessionId: this.input.providerSessionId,
      });
    if (this.#exited || this.#query === null) {
      throw new SwitchyardError(
        "session_closed",
        "The claude process is gone; open a new session (it resumes the conversation).",
        { providerSessionId: this.input.providerSessionId },
      );
    }
    return this.#query;
  }

  #activeTurn(turnId: string): ClaudeTurn {
    const turn = this.#turn;
    if (turn === null || turn.terminated || turn.turnId !== turnId)
      throw new SwitchyardError("turn_not_active", `Turn "${turnId}" is not running.`, { turnId });
    return turn;
  }

  async startTurn(input: TurnInput): Promise<{ readonly providerTurnId?: string }> {
    let query = this.#assertOpen();
    // After an interrupt the host may start the next turn before Claude ended the last one; the
    // interrupt grace timer bounds this wait. The next prompt must not reach the old turn.
    if (this.#turn !== null && !this.#turn.terminated && this.#turn.interruptRequested) await this.#turn.ledger.ended;
    query = this.#assertOpen();
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
        message: `The claude driver offers no "${input.interactionMode}" interaction mode; the turn runs in its default mode.`,
      });
    }
    if (input.runtimeMode !== this.#runtimeMode) {
      const before = this.#settings().permissionMode;
      this.#runtimeMode = input.runtimeMode;
      const after = this.#settings().permissionMode;
      if (after !== before) await query.setPermissionMode(after);
    }
    this.#warnIfRootFullAccess(input.turnId);
    if (input.model !== null && input.model !== this.#model) {
      await query.setModel(input.model);
      this.#model = input.model;
    }
    if (input.effort != null && input.effort !== this.#effort) {
      // The session-scoped flag layer, like /effort for this session only: nothing is written
      // to the user's settings files.
      await query.applyFlagSettings({ effortLevel: input.effort as EffortLevel });
      this.#effort = input.effort;
    }
    query = this.#assertOpen();
    const turn = new ClaudeTurn(input.turnId, this.#sink.emit, this.#requests);
    this.#turn = turn;
    const uuid = randomUUID();
    turn.expect(uuid);
    // The host folded every instruction into the text already (no instruction channel declared).
    this.#prompt.push(userMessage(input.text, uuid));
    turn.ledger.start();
    return {};
  }

  /**
   * Pushes the text into the running query. Claude folds it into the turn at the next tool
   * boundary, or answers it right after a text-only reply; the host turn ends only once Claude
   * has answered it.
   */
  async steerTurn(input: SteerInput): Promise<void> {
    this.#assertOpen();
    const turn = this.#activeTurn(input.turnId);
    if (turn.interruptRequested)
      throw new SwitchyardError("turn_not_active", `Turn "${input.turnId}" is being interrupted.`, {
        turnId: input.turnId,
      });
    const uuid = randomUUID();
    turn.expect(uuid);
    this.#prompt.push(userMessage(input.text, uuid));
  }

  /**
   * `interrupt()`: Claude aborts the model call or tool and ends the turn
   * (`error_during_execution`, `aborted_streaming`), reported interrupted. If it has not after
   * the grace period (short for a hard stop), the turn ends interrupted and the process is
   * stopped; the host's next turn opens a new session that resumes the transcript.
   */
  async interruptTurn(input: InterruptInput): Promise<void> {
    this.#assertOpen();
    const turn = this.#activeTurn(input.turnId);
    turn.interruptRequested = true;
    this.#requests.cancelTurn(turn.turnId, "cancelled");
    this.#interrupt(input.reason ?? "requested");
    const grace =
      input.hard === true ? Math.min(2_000, this.deps.options.interruptGraceMs) : this.deps.options.interruptGraceMs;
    if (turn.interruptTimer !== null) clearTimeout(turn.interruptTimer);
    turn.interruptTimer = setTimeout(() => {
      if (turn.terminated || this.#closed) return;
      this.#sink.emit({
        type: "warning",
        turnId: turn.turnId,
        message: `claude did not end the turn within ${grace} ms of the interrupt; its process was stopped.`,
      });
      this.#endTurn(turn, "interrupted");
      this.#query?.close();
      void this.#process?.stop();
    }, grace);
    turn.interruptTimer.unref();
  }

  #interrupt(why: string): void {
    void this.#query
      ?.interrupt()
      .catch((error: Error) => this.#logger.debug("claude interrupt failed", { why, error: error.message }));
  }

  /** The SDK's `forkSession`: a new Claude session with this conversation's whole transcript. */
  async forkThread(input: ForkInput): Promise<{ readonly resumeCursor: string }> {
    if (input.afterTurnId !== undefined) throw new UnsupportedCapabilityError("threads.forkFromTurn", "claude");
    if (this.#closed) throw new SwitchyardError("session_closed", "The session is closed.");
    if (this.#turn !== null && !this.#turn.terminated) {
      throw new SwitchyardError("conflict", `Turn "${this.#turn.turnId}" is running; fork after it ends.`, {
        runningTurnId: this.#turn.turnId,
      });
    }
    if (this.#cursor === null)
      throw new SwitchyardError(
        "conflict",
        "This Claude conversation has no saved turn yet, so there is nothing to fork.",
      );
    return { resumeCursor: await this.deps.transcripts.fork(this.#cursor, this.input.cwd) };
  }

  /** The conversation as Claude's transcript holds it. */
  async readSnapshot(): Promise<ThreadSnapshot> {
    if (this.#closed) throw new SwitchyardError("session_closed", "The session is closed.");
    if (this.#cursor === null) return { turns: [] };
    return this.deps.transcripts.snapshot(this.#cursor, this.input.cwd);
  }

  /** Answers an approval Claude asked for through `canUseTool`. */
  async respondToRuntimeRequest(requestId: string, response: RuntimeRequestResponse): Promise<void> {
    if (response.kind === "user_input")
      throw new UnsupportedCapabilityError("runtimeRequests.userInputQuestions", "claude");
    this.#requests.respond(requestId, response);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.onClosed();
    if (this.#turn?.interruptTimer) clearTimeout(this.#turn.interruptTimer);
    this.#requests.cancelTurn(null, "cancelled");
    this.#sink.close();
    this.#prompt.end();
    this.#query?.close();
    await this.#process?.stop();
    await this.#reading?.catch(() => undefined);
  }
}
