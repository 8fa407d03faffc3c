import * as acp from "@agentclientprotocol/sdk/unstable";
import {
  SwitchyardError,
  UnsupportedCapabilityError,
  type AdapterEvent,
  type ApprovalRequest,
  type ForkInput,
  type InteractionMode,
  type InterruptInput,
  type OpenSessionInput,
  type PluginContext,
  type PluginLogger,
  type ProviderCapabilities,
  type ProviderInstanceDescriptor,
  type ProviderSession,
  type RuntimeMode,
  type RuntimeRequestResponse,
  type SteerInput,
  type ThreadSnapshot,
  type TurnInput,
  type TurnTerminalStatus,
  type UserInputRequest,
  withStderrTail,
} from "@switchyard/spec";
import { agentModeIds, findConfigOption, planModeId, selectValues, sessionModelsOf } from "./acp-capabilities.js";
import {
  SerialQueue,
  authenticateAgent,
  connectClient,
  describeError,
  initializeAgent,
  launchEnv,
  openNewSession,
  settleInbound,
  withTimeout,
  type AcpClientHandlers,
} from "./acp-connection.js";
import { elicitationApproval, elicitationQuestions, elicitationResponse } from "./acp-elicitation.js";
import { modeMappingOf } from "./acp-flavor.js";
import type {
  AcpAgentDescription,
  AcpSessionModels,
  AcpChannel,
  AcpChannelFactory,
  AcpFlavor,
  AcpRuntimeRequestOutcome,
  AcpSessionHandle,
  AcpTurnView,
} from "./acp-flavor.js";
import { ConfinedFileSystem } from "./acp-fs.js";
import { buildAcpMcpServers, type AcpMcpInjection } from "./acp-mcp-injection.js";
import { approvalKindOf, approvalOptions, automaticOutcome, outcomeForDecision } from "./acp-permissions.js";
import { mcpServerOf, planMarkdown, toolKindOf, toolOutputText } from "./acp-tool-calls.js";

/** The earlier unstable ACP model switch, for agents that list `models` instead of a model config option. */
const SET_SESSION_MODEL_METHOD = "session/set_model";

/** What a session needs from its adapter. */
export interface AcpSessionDeps<TOptions> {
  readonly flavor: AcpFlavor<TOptions>;
  readonly instance: ProviderInstanceDescriptor;
  readonly options: TOptions;
  readonly context: PluginContext;
  readonly channelFactory: AcpChannelFactory;
  /** The capability record for what this agent negotiated. */
  capabilitiesFor(agent: AcpAgentDescription): ProviderCapabilities;
  /** Tells the adapter what the agent advertised (refines `capabilities()`). */
  onNegotiated(agent: AcpAgentDescription): void;
  /** Called once when the session closes. */
  onClosed?(): void;
}

interface AgentRuntime {
  readonly generation: number;
  readonly channel: AcpChannel;
  readonly connection: acp.ClientConnection;
  init: acp.InitializeResponse | null;
}

interface OpenItem {
  readonly itemId: string;
  text: string;
}

interface ToolState {
  done: boolean;
}

interface TurnState extends AcpTurnView {
  readonly promptText: string;
  terminated: boolean;
  interruptRequested: boolean;
  message: OpenItem | null;
  reasoning: OpenItem | null;
  assistantText: string;
  readonly tools: Map<string, ToolState>;
  readonly declinedToolCalls: Set<string>;
  planItemId: string | null;
  cancelTimer: NodeJS.Timeout | null;
  /** Settles when the turn's terminal has been emitted. */
  readonly ended: Promise<void>;
  markEnded(): void;
}

interface PendingRequest {
  readonly requestId: string;
  readonly turnId: string;
  readonly kind: "approval" | "user_input";
  settle(outcome: AcpRuntimeRequestOutcome): boolean;
}

/** Rebuilds turns from the history an agent replays during `session/load`. */
class ReplayCollector {
  readonly turns: { userText: string; assistantText: string }[] = [];

  add(update: acp.SessionUpdate): void {
    if (update.sessionUpdate !== "user_message_chunk" && update.sessionUpdate !== "agent_message_chunk") return;
    if (update.content.type !== "text") return;
    let current = this.turns.at(-1);
    if (update.sessionUpdate === "user_message_chunk") {
      if (current === undefined || current.assistantText.length > 0) {
        current = { userText: "", assistantText: "" };
        this.turns.push(current);
      }
      current.userText += update.content.text;
    } else {
      if (current === undefined) {
        current = { userText: "", assistantText: "" };
        this.turns.push(current);
      }
      current.assistantText += update.content.text;
    }
  }
}

function isTerminalToolStatus(status: acp.ToolCallStatus | null | undefined): status is "completed" | "failed" {
  return status === "completed" || status === "failed";
}

function detailOf(toolCall: acp.ToolCallUpdate): string | undefined {
  const diff = toolCall.content?.find((item) => item.type === "diff");
  if (diff && diff.type === "diff") return `--- ${diff.path}\n${diff.newText}`;
  if (toolCall.rawInput !== undefined && toolCall.rawInput !== null) {
    return typeof toolCall.rawInput === "string" ? toolCall.rawInput : JSON.stringify(toolCall.rawInput);
  }
  return undefined;
}

/**
 * One ACP session, in its own agent process. Every event goes through a serial queue: the SDK
 * runs notification handlers concurrently, so handlers only enqueue, and a prompt's end is
 * queued only after every message received before its response has been dispatched.
 */
export class AcpProviderSession<TOptions> implements ProviderSession {
  private readonly logger: PluginLogger;
  private readonly fs: ConfinedFileSystem;
  private readonly queue: SerialQueue;
  private readonly handle: AcpSessionHandle;
  private runtime: AgentRuntime | null = null;
  private generation = 0;
  private acpSessionId: string | null = null;
  private agent: AcpAgentDescription | null = null;
  private modes: acp.SessionModeState | null = null;
  private initialModeId: string | null = null;
  private configOptions: acp.SessionConfigOption[] | null = null;
  private sessionModels: AcpSessionModels | null = null;
  private turn: TurnState | null = null;
  private readonly pending = new Map<string, PendingRequest>();
  private snapshotTurns: { userText: string; assistantText: string }[] = [];
  private replay: ReplayCollector | null = null;
  private closed = false;
  private started = false;
  private exited = false;
  private restarting: Promise<void> | null = null;
  private requestCounter = 0;
  private readonly itemCounters = new Map<string, number>();
  private runtimeMode: RuntimeMode;
  private interactionMode: InteractionMode;
  private model: string | null;
  private warnedModel: string | null = null;
  private mcpInjection: AcpMcpInjection = "none";

  constructor(
    private readonly deps: AcpSessionDeps<TOptions>,
    private readonly input: OpenSessionInput,
  ) {
    this.logger = deps.context.logger.child({
      driver: deps.flavor.driverKind,
      instanceId: deps.instance.id,
      providerSessionId: input.providerSessionId,
    });
    this.fs = new ConfinedFileSystem(input.cwd);
    this.queue = new SerialQueue((error) => this.logger.error("ACP session task failed", { error: describeError(error) }));
    this.runtimeMode = input.runtimeMode;
    this.interactionMode = input.interactionMode;
    this.model = input.model;
    const session = this;
    this.handle = {
      providerSessionId: input.providerSessionId,
      threadId: input.threadId,
      get acpSessionId() {
        return session.acpSessionId;
      },
      cwd: input.cwd,
      get activeTurn(): AcpTurnView | null {
        const turn = session.turn;
        return turn && !turn.terminated
          ? { turnId: turn.turnId, runtimeMode: turn.runtimeMode, interactionMode: turn.interactionMode }
          : null;
      },
      logger: this.logger,
      emit: (event) => void this.queue.run(() => this.emit(event)),
      newItemId: (turnId, prefix) => this.newItemId(turnId, prefix),
      openRuntimeRequest: (turnId, request, options) => this.openRuntimeRequest(turnId, request, options?.signal),
    };
  }

  /** The ACP session id. */
  get resumeCursor(): string | null {
    return this.acpSessionId;
  }

  /** How the Switchyard MCP endpoint reached the agent (for diagnostics; never the token). */
  get mcpInjectionKind(): AcpMcpInjection {
    return this.mcpInjection;
  }

  /** The process id of the current agent, when it runs as a process. */
  get agentPid(): number | undefined {
    return this.runtime?.channel.pid;
  }

  /** Starts the agent and opens (or resumes) the ACP session. */
  async start(): Promise<void> {
    await this.launch(this.input.resumeCursor, false);
    await this.applyModel(this.model, undefined, true);
    await this.applyModes(this.runtimeMode, this.interactionMode, undefined);
    this.started = true;
    // An agent that died during setup was not reported yet.
    if (this.runtime?.connection.signal.aborted) this.onAgentGone(this.runtime);
  }

  // ---------------------------------------------------------------------------------------
  // Agent lifecycle

  private setupTimeout(): number {
    return this.deps.flavor.setupTimeoutMs ?? 30_000;
  }

  private async launch(resumeCursor: string | null, respawn: boolean): Promise<void> {
    const { flavor, instance, options, context } = this.deps;
    const launch = await flavor.resolveLaunch({ instance, options, cwd: this.input.cwd, purpose: "session", context });
    const channel = await this.deps.channelFactory(launch, {
      cwd: this.input.cwd,
      env: launchEnv(instance.environment, launch),
      label: `${flavor.driverKind} acp agent`,
      context,
    });
    if (this.closed) {
      await channel.kill();
      throw new SwitchyardError("session_closed", "The session was closed while its agent was starting.");
    }
    const generation = ++this.generation;
    const connection = connectClient(channel.stream, this.handlersFor(generation));
    const runtime: AgentRuntime = { generation, channel, connection, init: null };
    this.runtime = runtime;
    void connection.closed.then(() => this.onAgentGone(runtime));
    this.logger.info("ACP agent started", { pid: channel.pid, command: launch.command });

    const timeout = this.setupTimeout();
    let init: acp.InitializeResponse;
    try {
      init = await initializeAgent(connection, context.hostVersion, timeout);
    } catch (error) {
      throw this.startFailure("initialize", error, channel);
    }
    init = flavor.hooks?.adjustInitialize?.(init, { options }) ?? init;
    runtime.init = init;
    await this.authenticate(connection, init);

    const agentCaps = init.agentCapabilities ?? {};
    const { servers, injection } = buildAcpMcpServers(this.input.mcp, agentCaps.mcpCapabilities, flavor.mcpTransport ?? "auto");
    this.mcpInjection = injection;
    this.logger.debug("MCP endpoint injection", { injection, configured: this.input.mcp !== null });
    const meta = flavor.hooks?.sessionMeta?.({ options, runtimeMode: this.runtimeMode, interactionMode: this.interactionMode });
    const base = { cwd: this.input.cwd, mcpServers: servers, ...(meta !== undefined ? { _meta: meta } : {}) };

    let setup: { modes?: acp.SessionModeState | null; configOptions?: acp.SessionConfigOption[] | null };
    const previousCursor = resumeCursor;
    if (resumeCursor !== null) {
      if (agentCaps.loadSession === true) {
        const collector = new ReplayCollector();
        this.replay = collector;
        this.acpSessionId = resumeCursor;
        try {
          setup = await withTimeout(
            connection.agent.request(acp.methods.agent.session.load, { ...base, sessionId: resumeCursor }),
            timeout,
            "The agent's session/load",
          );
        } catch (error) {
          this.replay = null;
          throw this.resumeFailure(resumeCursor, error, channel);
        }
        // The replay arrives as session/update before the response; let it all land first.
        await settleInbound();
        await this.queue.run(() => undefined);
        this.replay = null;
        this.snapshotTurns = collector.turns;
      } else if (agentCaps.sessionCapabilities?.resume !== undefined && agentCaps.sessionCapabilities.resume !== null) {
        try {
          setup = await withTimeout(
            connection.agent.request(acp.methods.agent.session.resume, { ...base, sessionId: resumeCursor }),
            timeout,
            "The agent's session/resume",
          );
        } catch (error) {
          throw this.resumeFailure(resumeCursor, error, channel);
        }
        this.acpSessionId = resumeCursor;
      } else if (respawn) {
        // A respawn of an agent that cannot reload: start over, and say so.
        const created = await this.newSession(connection, base, init);
        setup = created;
        this.acpSessionId = created.sessionId;
        this.emit({ type: "warning", message: "The agent cannot reload its session; the restarted agent begins a new conversation." });
      } else {
        throw new UnsupportedCapabilityError(
          "sessions.resume",
          flavor.driverKind,
          `Agent "${flavor.displayName}" advertises neither loadSession nor session/resume, so session "${resumeCursor}" cannot be reopened.`,
        );
      }
    } else {
      const created = await this.newSession(connection, base, init);
      setup = created;
      this.acpSessionId = created.sessionId;
    }

    this.modes = setup.modes ?? null;
    this.initialModeId ??= this.modes?.currentModeId ?? null;
    this.configOptions = setup.configOptions ?? null;
    this.sessionModels = sessionModelsOf(setup);
    this.agent = { initialize: init, modes: setup.modes ?? null, configOptions: setup.configOptions ?? null, models: this.sessionModels };
    this.deps.onNegotiated(this.agent);
    if (this.acpSessionId !== previousCursor && this.acpSessionId !== null) {
      this.emit({ type: "session.resume_cursor", cursor: this.acpSessionId });
    }
  }

  private newSession(connection: acp.ClientConnection, base: acp.NewSessionRequest, init: acp.InitializeResponse): Promise<acp.NewSessionResponse> {
    return openNewSession(connection, base, init, this.deps.flavor.displayName, this.setupTimeout());
  }

  private async authenticate(connection: acp.ClientConnection, init: acp.InitializeResponse): Promise<void> {
    const methodId = this.deps.flavor.authMethodId?.({ options: this.deps.options, authMethods: init.authMethods ?? [] });
    await authenticateAgent(connection, init, methodId, this.setupTimeout());
  }

  private startFailure(step: string, error: unknown, channel: AcpChannel): SwitchyardError {
    const stderr = channel.stderrTail?.() ?? "";
    if (error instanceof SwitchyardError) return new SwitchyardError(error.code, withStderrTail(error.message, stderr), error.details === undefined ? undefined : { ...error.details });
    return new SwitchyardError("provider_unavailable", withStderrTail(`The agent failed during ${step}: ${describeError(error).message}`, stderr), { step });
  }

  private resumeFailure(cursor: string, error: unknown, channel: AcpChannel): SwitchyardError {
    if (error instanceof acp.RequestError && error.code === -32002) {
      return new SwitchyardError("not_found", `The agent has no session "${cursor}" to reopen.`, { resumeCursor: cursor });
    }
    return this.startFailure("session reload", error, channel);
  }

  private onAgentGone(runtime: AgentRuntime): void {
    if (runtime.generation !== this.generation || this.closed || !this.started) return;
    void (async () => {
      const exit = await Promise.race([
        runtime.channel.exited,
        new Promise<null>((resolve) => setTimeout(() => resolve(null), 2_000).unref()),
      ]);
      await settleInbound();
      await this.queue.run(() => {
        if (runtime.generation !== this.generation || this.closed || this.exited) return;
        this.exited = true;
        const how = exit === null ? "closed its connection" : `exited (code ${exit.exitCode ?? "none"}, signal ${exit.signal ?? "none"})`;
        const reason = withStderrTail(`The ACP agent process ${how}.`, runtime.channel.stderrTail?.());
        this.logger.warn("ACP agent exited", { reason });
        this.cancelPending(null, "cancelled");
        if (this.turn && !this.turn.terminated) this.finishTurn(this.turn, "failed", { code: "agent_exited", message: reason });
        const clean = exit !== null && exit.exitCode === 0;
        this.emit({
          type: "session.exited",
          reason,
          ...(clean ? {} : { error: { code: exit?.exitCode != null ? String(exit.exitCode) : "agent_exited", message: reason } }),
        });
      });
      // Reap whatever the agent left in its process group.
      await runtime.channel.kill().catch(() => undefined);
    })();
  }

  /** Kills the agent's process group and starts it again, reloading the session when it can. */
  private async respawn(turn: TurnState | null, reason: string): Promise<void> {
    const old = this.runtime;
    this.generation++;
    this.restarting = (async () => {
      await this.queue.run(() => {
        if (turn) {
          this.cancelPending(turn.turnId, "cancelled");
          this.finishTurn(turn, "interrupted");
        }
      });
      if (old) {
        old.connection.close();
        await old.channel.kill().catch(() => undefined);
      }
      this.logger.info("ACP agent respawning", { reason });
      try {
        await this.launch(this.acpSessionId, true);
        await this.applyModel(this.model, undefined, false);
        await this.applyModes(this.runtimeMode, this.interactionMode, undefined);
      } catch (error) {
        await this.queue.run(() => {
          if (this.closed || this.exited) return;
          this.exited = true;
          this.emit({ type: "session.exited", reason: "The agent could not be restarted after a hard interrupt.", error: describeError(error) });
        });
        if (this.runtime && this.runtime !== old) await this.runtime.channel.kill().catch(() => undefined);
      }
    })().finally(() => {
      this.restarting = null;
    });
    await this.restarting;
  }

  // ---------------------------------------------------------------------------------------
  // Client-side handlers

  private handlersFor(generation: number): AcpClientHandlers {
    const stale = () => generation !== this.generation || this.closed;
    return {
      requestPermission: async (params, signal) => (stale() ? { outcome: { outcome: "cancelled" } } : this.onPermission(params, signal)),
      readTextFile: async (params) => {
        if (stale()) throw acp.RequestError.invalidRequest(undefined, "The session is closed.");
        return { content: await this.fs.read(params.path, params.line, params.limit) };
      },
      writeTextFile: async (params) => {
        if (stale()) throw acp.RequestError.invalidRequest(undefined, "The session is closed.");
        await this.fs.write(params.path, params.content);
        return {};
      },
      createElicitation: async (params, signal) => (stale() ? { action: "cancel" } : this.onElicitation(params, signal)),
      sessionUpdate: (params) => {
        if (stale()) return;
        if (this.acpSessionId !== null && params.sessionId !== this.acpSessionId) return;
        void this.queue.run(() => this.applyUpdate(params.update));
      },
      extensionRequest: async (method, params, signal) => {
        const handler = this.deps.flavor.extensions?.requests?.[method];
        if (handler === undefined || stale()) throw acp.RequestError.methodNotFound(method);
        return handler({ method, params, session: this.handleFor(params), signal });
      },
      extensionNotification: async (method, params, signal) => {
        const handler = this.deps.flavor.extensions?.notifications?.[method];
        if (handler === undefined || stale()) return;
        await handler({ method, params, session: this.handleFor(params), signal });
      },
    };
  }

  private handleFor(params: unknown): AcpSessionHandle | null {
    const sessionId = typeof params === "object" && params !== null ? (params as { sessionId?: unknown }).sessionId : undefined;
    return sessionId === undefined || sessionId === this.acpSessionId ? this.handle : null;
  }

  private async onPermission(params: acp.RequestPermissionRequest, signal: AbortSignal): Promise<acp.RequestPermissionResponse> {
    const turn = this.turn;
    if (turn === null || turn.terminated) {
      this.logger.warn("Permission request outside a turn answered cancelled", { toolCallId: params.toolCall.toolCallId });
      return { outcome: { outcome: "cancelled" } };
    }
    const automatic = automaticOutcome(turn.runtimeMode, params.toolCall.kind, params.options);
    if (automatic !== null) return { outcome: automatic };
    const detail = detailOf(params.toolCall);
    const request: ApprovalRequest = {
      kind: "approval",
      approvalKind: approvalKindOf(params.toolCall.kind),
      title: params.toolCall.title ?? params.toolCall.toolCallId,
      ...(detail !== undefined ? { detail } : {}),
      options: approvalOptions(params.options),
    };
    const outcome = await this.openRuntimeRequest(turn.turnId, request, signal);
    if (outcome.kind === "cancelled" || outcome.response.kind !== "approval") return { outcome: { outcome: "cancelled" } };
    const answer = outcomeForDecision(outcome.response.decision, params.options);
    if (outcome.response.decision === "decline") turn.declinedToolCalls.add(params.toolCall.toolCallId);
    return { outcome: answer };
  }

  private async onElicitation(params: acp.CreateElicitationRequest, signal: AbortSignal): Promise<acp.CreateElicitationResponse> {
    const turn = this.turn;
    if (turn === null || turn.terminated) return { action: "cancel" };
    const request: ApprovalRequest | UserInputRequest = params.mode === "url" ? elicitationApproval(params) : elicitationQuestions(params);
    const outcome = await this.openRuntimeRequest(turn.turnId, request, signal);
    if (outcome.kind === "cancelled") return { action: "cancel" };
    return elicitationResponse(params, outcome.response);
  }

  // ---------------------------------------------------------------------------------------
  // Runtime requests

  private openRuntimeRequest(
    turnId: string,
    request: ApprovalRequest | UserInputRequest,
    signal?: AbortSignal,
  ): Promise<AcpRuntimeRequestOutcome> {
    if (this.closed || this.exited) return Promise.resolve({ kind: "cancelled" });
    const turn = this.turn;
    if (turn === null || turn.turnId !== turnId || turn.terminated) return Promise.resolve({ kind: "cancelled" });
    const requestId = `${turnId}:request:${++this.requestCounter}`;
    return new Promise<AcpRuntimeRequestOutcome>((resolve) => {
      let settled = false;
      const onAbort = () => {
        if (entry.settle({ kind: "cancelled" })) void this.queue.run(() => this.emitResolved(entry, "cancelled"));
      };
      const entry: PendingRequest = {
        requestId,
        turnId,
        kind: request.kind,
        settle: (outcome) => {
          if (settled) return false;
          settled = true;
          this.pending.delete(requestId);
          signal?.removeEventListener("abort", onAbort);
          resolve(outcome);
          return true;
        },
      };
      this.pending.set(requestId, entry);
      void this.queue.run(() => this.emit({ type: "runtime_request.opened", turnId, requestId, request }));
      if (signal?.aborted) onAbort();
      else signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  private emitResolved(entry: PendingRequest, resolution: "answered" | "cancelled" | "expired"): void {
    this.emit({ type: "runtime_request.resolved", turnId: entry.turnId, requestId: entry.requestId, resolution });
  }

  /** Settles pending requests (of one turn, or all) as cancelled. Runs inside the queue. */
  private cancelPending(turnId: string | null, resolution: "cancelled" | "expired"): void {
    for (const entry of [...this.pending.values()]) {
      if (turnId !== null && entry.turnId !== turnId) continue;
      if (entry.settle({ kind: "cancelled" })) this.emitResolved(entry, resolution);
    }
  }

  /** Answers a runtime request this session opened. */
  async respondToRuntimeRequest(requestId: string, response: RuntimeRequestResponse): Promise<void> {
    const entry = this.pending.get(requestId);
    if (entry === undefined) {
      throw new SwitchyardError("not_found", `No pending runtime request "${requestId}" in this session; it may have been answered or cancelled.`, {
        requestId,
      });
    }
    if (entry.kind === "approval" && response.kind === "user_input") {
      throw new SwitchyardError("invalid_input", `Runtime request "${requestId}" is an approval; answer it with a decision.`, {
        requestId,
        kind: response.kind,
      });
    }
    // The spec's rule for every provider: a dismissal is a cancellation, not an answer.
    if (entry.settle({ kind: "answered", response })) await this.queue.run(() => this.emitResolved(entry, response.kind === "dismiss" ? "cancelled" : "answered"));
  }

  // ---------------------------------------------------------------------------------------
  // Turns

  private assertOpen(): void {
    if (this.closed) throw new SwitchyardError("session_closed", "The session is closed.", { providerSessionId: this.input.providerSessionId });
    if (this.exited || this.runtime === null) {
      throw new SwitchyardError("session_closed", "The agent process is gone; open a new session (resuming it when the provider can).", {
        providerSessionId: this.input.providerSessionId,
      });
    }
  }

  async startTurn(input: TurnInput): Promise<{ readonly providerTurnId?: string }> {
    if (this.restarting) await this.restarting;
    this.assertOpen();
    // Interrupt-and-restart: the host may start the replacement before the agent has answered
    // session/cancel. The cancel timeout bounds this wait.
    if (this.turn !== null && !this.turn.terminated && this.turn.interruptRequested) await this.turn.ended;
    if (this.restarting) await this.restarting;
    this.assertOpen();
    if (this.turn !== null && !this.turn.terminated) {
      throw new SwitchyardError("conflict", `Turn "${this.turn.turnId}" is still running; ACP sessions run one prompt at a time.`, {
        runningTurnId: this.turn.turnId,
        turnId: input.turnId,
      });
    }
    const runtime = this.runtime as AgentRuntime;
    if (input.model !== null) this.model = input.model;
    await this.applyModel(this.model, input.turnId, true);
    await this.applyModes(input.runtimeMode, input.interactionMode, input.turnId);

    // ACP has no system prompt: the host already folded any instructions into the text.
    const promptText = input.text;
    let markEnded!: () => void;
    const ended = new Promise<void>((resolve) => {
      markEnded = resolve;
    });
    const turn: TurnState = {
      turnId: input.turnId,
      runtimeMode: input.runtimeMode,
      interactionMode: input.interactionMode,
      promptText,
      terminated: false,
      interruptRequested: false,
      message: null,
      reasoning: null,
      assistantText: "",
      tools: new Map(),
      declinedToolCalls: new Set(),
      planItemId: null,
      cancelTimer: null,
      ended,
      markEnded,
    };
    this.turn = turn;
    const prompt = runtime.connection.agent.request(acp.methods.agent.session.prompt, {
      sessionId: this.acpSessionId as string,
      prompt: [{ type: "text", text: promptText }],
    });
    void this.queue.run(() => this.emit({ type: "turn.started", turnId: turn.turnId }));
    prompt.then(
      (response) => this.afterPrompt(turn, runtime, { response }),
      (error: unknown) => this.afterPrompt(turn, runtime, { error }),
    );
    return {};
  }

  private async afterPrompt(
    turn: TurnState,
    runtime: AgentRuntime,
    result: { response: acp.PromptResponse } | { error: unknown },
  ): Promise<void> {
    // Updates the agent sent before its response may still be in the SDK's dispatch.
    await settleInbound();
    await this.queue.run(() => {
      if (turn.terminated) return;
      if ("error" in result) {
        // A dropped connection is the exit path's to report (with the exit status).
        if (runtime.connection.signal.aborted || runtime.generation !== this.generation) return;
        this.finishTurn(turn, "failed", describeError(result.error));
        return;
      }
      const { stopReason } = result.response;
      const usage = result.response.usage
        ? { inputTokens: result.response.usage.inputTokens, outputTokens: result.response.usage.outputTokens }
        : undefined;
      switch (stopReason) {
        case "end_turn":
          this.finishTurn(turn, "completed", undefined, usage);
          return;
        case "max_tokens":
        case "max_turn_requests":
          this.emit({ type: "warning", turnId: turn.turnId, message: `The agent stopped the turn early (${stopReason}).` });
          this.finishTurn(turn, "completed", undefined, usage);
          return;
        case "refusal":
          this.finishTurn(turn, "failed", { code: "refusal", message: "The agent refused to continue this turn." }, usage);
          return;
        case "cancelled":
          this.finishTurn(turn, turn.interruptRequested ? "interrupted" : "cancelled", undefined, usage);
          return;
        default:
          this.emit({ type: "warning", turnId: turn.turnId, message: `Unknown stop reason "${String(stopReason)}" treated as completed.` });
          this.finishTurn(turn, "completed", undefined, usage);
      }
    });
  }

  /** Ends a turn: closes open items, settles its requests, emits the terminal. Runs inside the queue. */
  private finishTurn(
    turn: TurnState,
    status: TurnTerminalStatus,
    error?: { code?: string; message: string },
    usage?: { inputTokens?: number; outputTokens?: number },
  ): void {
    if (turn.terminated) return;
    turn.terminated = true;
    if (turn.cancelTimer) clearTimeout(turn.cancelTimer);
    this.closeMessage(turn);
    this.closeReasoning(turn);
    for (const [itemId, tool] of turn.tools) {
      if (tool.done) continue;
      tool.done = true;
      this.emit({ type: "tool_call.completed", turnId: turn.turnId, itemId, status: status === "completed" ? "completed" : "failed" });
    }
    this.cancelPending(turn.turnId, "cancelled");
    this.snapshotTurns.push({ userText: turn.promptText, assistantText: turn.assistantText });
    this.emit({
      type: "turn.terminal",
      turnId: turn.turnId,
      status,
      ...(error !== undefined ? { error } : {}),
      ...(usage !== undefined ? { usage } : {}),
    });
    if (this.turn === turn) this.turn = null;
    turn.markEnded();
  }

  /** ACP has no steering; the shared policy interrupts and restarts instead. */
  async steerTurn(_input: SteerInput): Promise<void> {
    throw new UnsupportedCapabilityError("turns.activeSteering", this.deps.flavor.driverKind);
  }

  /** `session/cancel` (soft), or kill-and-respawn for a hard stop when the flavor asks for it. */
  async interruptTurn(input: InterruptInput): Promise<void> {
    if (this.restarting) await this.restarting;
    this.assertOpen();
    const turn = this.turn;
    if (turn === null || turn.terminated || turn.turnId !== input.turnId) {
      throw new SwitchyardError("turn_not_active", `Turn "${input.turnId}" is not running.`, { turnId: input.turnId });
    }
    turn.interruptRequested = true;
    if (input.hard === true && this.deps.flavor.hardInterrupt === "respawn") {
      await this.respawn(turn, input.reason ?? "hard interrupt");
      return;
    }
    const runtime = this.runtime as AgentRuntime;
    await runtime.connection.agent.notify(acp.methods.agent.session.cancel, { sessionId: this.acpSessionId as string }).catch(() => undefined);
    // ACP: after session/cancel the client answers every pending permission request `cancelled`.
    await this.queue.run(() => this.cancelPending(turn.turnId, "cancelled"));
    const grace = this.deps.flavor.cancelTimeoutMs ?? 15_000;
    turn.cancelTimer = setTimeout(() => void this.onCancelTimeout(turn), grace);
    turn.cancelTimer.unref();
  }

  private async onCancelTimeout(turn: TurnState): Promise<void> {
    if (turn.terminated || this.closed) return;
    if (this.deps.flavor.hardInterrupt === "respawn") {
      await this.respawn(turn, "the agent ignored session/cancel");
      return;
    }
    await this.queue.run(() => {
      this.emit({ type: "warning", turnId: turn.turnId, message: "The agent did not end the turn after session/cancel; the turn is treated as interrupted." });
      this.finishTurn(turn, "interrupted");
    });
  }

  /** Forks through `/unstable` `session/fork`, when the agent advertised it. */
  async forkThread(input: ForkInput): Promise<{ readonly resumeCursor: string }> {
    const capabilities = this.capabilities();
    if (!capabilities.threads.fork) throw new UnsupportedCapabilityError("threads.fork", this.deps.flavor.driverKind);
    if (input.afterTurnId !== undefined) throw new UnsupportedCapabilityError("threads.forkFromTurn", this.deps.flavor.driverKind);
    this.assertOpen();
    const runtime = this.runtime as AgentRuntime;
    const { servers } = buildAcpMcpServers(this.input.mcp, runtime.init?.agentCapabilities?.mcpCapabilities, this.deps.flavor.mcpTransport ?? "auto");
    const response = await withTimeout(
      runtime.connection.agent.request(acp.methods.agent.session.fork, {
        sessionId: this.acpSessionId as string,
        cwd: this.input.cwd,
        mcpServers: servers,
      }),
      this.setupTimeout(),
      "The agent's session/fork",
    );
    return { resumeCursor: response.sessionId };
  }

  /** The conversation as the agent replayed it at `session/load`, plus the turns since. */
  async readSnapshot(): Promise<ThreadSnapshot> {
    if (!this.capabilities().threads.readSnapshot) throw new UnsupportedCapabilityError("threads.readSnapshot", this.deps.flavor.driverKind);
    await this.queue.run(() => undefined);
    return { turns: this.snapshotTurns.map((turn) => ({ ...turn })) };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.deps.onClosed?.();
    if (this.restarting) await this.restarting.catch(() => undefined);
    for (const entry of [...this.pending.values()]) entry.settle({ kind: "cancelled" });
    if (this.turn?.cancelTimer) clearTimeout(this.turn.cancelTimer);
    const runtime = this.runtime;
    this.runtime = null;
    if (runtime) {
      runtime.connection.close();
      await runtime.channel.kill().catch(() => undefined);
    }
  }

  private capabilities(): ProviderCapabilities {
    return this.deps.capabilitiesFor(this.agent ?? { initialize: { protocolVersion: acp.PROTOCOL_VERSION } });
  }

  // ---------------------------------------------------------------------------------------
  // Models and modes

  private async setConfigOption(configId: string, value: string): Promise<void> {
    const runtime = this.runtime as AgentRuntime;
    const response = await withTimeout(
      runtime.connection.agent.request(acp.methods.agent.session.setConfigOption, { sessionId: this.acpSessionId as string, configId, value }),
      this.setupTimeout(),
      "The agent's session/set_config_option",
    );
    this.configOptions = response.configOptions;
  }

  private async applyModel(model: string | null, turnId: string | undefined, strict: boolean): Promise<void> {
    if (model === null) return;
    const option = findConfigOption(this.configOptions, "model");
    if (option === undefined && this.sessionModels !== null && this.sessionModels.availableModels.length > 0) {
      await this.applySessionModel(this.sessionModels, model, strict);
      return;
    }
    if (option === undefined) {
      if (this.warnedModel !== model) {
        this.warnedModel = model;
        this.emit({
          type: "warning",
          ...(turnId !== undefined ? { turnId } : {}),
          message: `The agent offers no model setting; model "${model}" was not applied and the agent's own model is used.`,
        });
      }
      return;
    }
    if (option.currentValue === model) return;
    const values = selectValues(option);
    if (!values.includes(model)) {
      if (!strict) return;
      throw new SwitchyardError("invalid_input", `Model "${model}" is not offered by this agent (offered: ${values.join(", ")}).`, {
        model,
        offered: values,
      });
    }
    await this.setConfigOption(option.id, model);
  }

  /** Switches the model through the session's `models` list (`session/set_model`). */
  private async applySessionModel(models: AcpSessionModels, model: string, strict: boolean): Promise<void> {
    if (models.currentModelId === model) return;
    const offered = models.availableModels.map((entry) => entry.modelId);
    if (!offered.includes(model)) {
      if (!strict) return;
      throw new SwitchyardError("invalid_input", `Model "${model}" is not offered by this agent (offered: ${offered.join(", ")}).`, { model, offered });
    }
    const runtime = this.runtime as AgentRuntime;
    await withTimeout(
      runtime.connection.agent.request(SET_SESSION_MODEL_METHOD, { sessionId: this.acpSessionId as string, modelId: model }),
      this.setupTimeout(),
      "The agent's session/set_model",
    );
    this.sessionModels = { ...models, currentModelId: model };
  }

  private async applyModes(runtimeMode: RuntimeMode, interactionMode: InteractionMode, turnId: string | undefined): Promise<void> {
    this.runtimeMode = runtimeMode;
    this.interactionMode = interactionMode;
    const description = { modes: this.modes, configOptions: this.configOptions };
    const mapping = modeMappingOf(this.deps.flavor, this.deps.options);
    const ids = agentModeIds(description);
    let target: string | null = null;
    if (interactionMode === "plan") {
      target = planModeId(description, mapping);
      if (target === null) {
        this.emit({
          type: "warning",
          ...(turnId !== undefined ? { turnId } : {}),
          message: "The agent has no plan mode; the turn runs in its default mode.",
        });
      }
    }
    if (target === null && ids.length > 0) {
      const mapped = mapping?.runtime?.[runtimeMode] ?? runtimeMode;
      if (ids.includes(mapped)) target = mapped;
      else if (this.initialModeId !== null && this.initialModeId !== planModeId(description, mapping)) target = this.initialModeId;
    }
    if (target === null) return;
    const runtime = this.runtime as AgentRuntime;
    if (this.modes?.availableModes.some((mode) => mode.id === target)) {
      if (this.modes.currentModeId === target) return;
      await withTimeout(
        runtime.connection.agent.request(acp.methods.agent.session.setMode, { sessionId: this.acpSessionId as string, modeId: target }),
        this.setupTimeout(),
        "The agent's session/set_mode",
      );
      this.modes = { ...this.modes, currentModeId: target };
      return;
    }
    const option = findConfigOption(this.configOptions, "mode");
    if (option !== undefined && option.currentValue !== target) await this.setConfigOption(option.id, target);
  }

  // ---------------------------------------------------------------------------------------
  // session/update → adapter events (runs inside the queue)

  private applyUpdate(update: acp.SessionUpdate): void {
    if (this.replay !== null) {
      this.replay.add(update);
      return;
    }
    if (update.sessionUpdate === "current_mode_update") {
      if (this.modes) this.modes = { ...this.modes, currentModeId: update.currentModeId };
      return;
    }
    if (update.sessionUpdate === "config_option_update") {
      this.configOptions = update.configOptions;
      return;
    }
    const turn = this.turn;
    if (turn === null || turn.terminated) {
      this.logger.debug("session/update outside a turn ignored", { kind: update.sessionUpdate });
      return;
    }
    if (this.deps.flavor.hooks?.onSessionUpdate?.(update, this.handle) === true) return;
    switch (update.sessionUpdate) {
      case "agent_message_chunk":
        if (update.content.type !== "text" || update.content.text.length === 0) return;
        this.closeReasoning(turn);
        turn.message ??= { itemId: this.newItemId(turn.turnId, "message"), text: "" };
        turn.message.text += update.content.text;
        turn.assistantText += update.content.text;
        this.emit({ type: "message.delta", turnId: turn.turnId, itemId: turn.message.itemId, text: update.content.text });
        return;
      case "agent_thought_chunk":
        if (update.content.type !== "text" || update.content.text.length === 0) return;
        this.closeMessage(turn);
        turn.reasoning ??= { itemId: this.newItemId(turn.turnId, "reasoning"), text: "" };
        turn.reasoning.text += update.content.text;
        this.emit({ type: "reasoning.delta", turnId: turn.turnId, itemId: turn.reasoning.itemId, text: update.content.text });
        return;
      case "tool_call":
        this.closeMessage(turn);
        this.closeReasoning(turn);
        this.startTool(turn, update);
        return;
      case "tool_call_update":
        this.updateTool(turn, update);
        return;
      case "plan":
        // A plan update in default mode is the agent's progress list, not a proposal.
        if (turn.interactionMode !== "plan" || update.entries.length === 0) return;
        turn.planItemId ??= this.newItemId(turn.turnId, "plan");
        this.emit({ type: "plan.proposed", turnId: turn.turnId, itemId: turn.planItemId, text: planMarkdown(update.entries) });
        return;
      default:
        // user_message_chunk (our own prompt echoed), usage, commands, session info: nothing to report.
        return;
    }
  }

  private startTool(turn: TurnState, call: acp.ToolCall | acp.ToolCallUpdate): void {
    const itemId = call.toolCallId;
    if (turn.tools.has(itemId)) {
      this.updateTool(turn, call);
      return;
    }
    const servers = this.injectedServerNames();
    const kind = this.deps.flavor.hooks?.toolKind?.(call) ?? toolKindOf(call, servers);
    const mcp = mcpServerOf(call, servers);
    const title = call.title ?? call.toolCallId;
    turn.tools.set(itemId, { done: false });
    this.emit({
      type: "tool_call.started",
      turnId: turn.turnId,
      itemId,
      kind,
      name: call.name ?? (mcp !== null ? `mcp__${mcp.server}__${mcp.tool}` : title),
      title,
      ...(mcp !== null ? { server: mcp.server } : {}),
      ...(call.rawInput !== undefined ? { input: call.rawInput } : {}),
    });
    if (isTerminalToolStatus(call.status)) this.updateTool(turn, call);
  }

  private updateTool(turn: TurnState, update: acp.ToolCall | acp.ToolCallUpdate): void {
    const state = turn.tools.get(update.toolCallId);
    if (state === undefined) {
      this.startTool(turn, update);
      return;
    }
    if (state.done || !isTerminalToolStatus(update.status)) return;
    state.done = true;
    const output = toolOutputText(update);
    const status = update.status === "completed" ? "completed" : turn.declinedToolCalls.has(update.toolCallId) ? "declined" : "failed";
    this.emit({ type: "tool_call.completed", turnId: turn.turnId, itemId: update.toolCallId, status, ...(output !== undefined ? { output } : {}) });
  }

  /** The MCP servers this session injected (their names identify MCP tool calls). */
  private injectedServerNames(): string[] {
    return this.input.mcp !== null ? [this.input.mcp.serverName] : [];
  }

  private closeMessage(turn: TurnState): void {
    if (turn.message === null) return;
    this.emit({ type: "message.completed", turnId: turn.turnId, itemId: turn.message.itemId, text: turn.message.text });
    turn.message = null;
  }

  private closeReasoning(turn: TurnState): void {
    if (turn.reasoning === null) return;
    this.emit({ type: "reasoning.completed", turnId: turn.turnId, itemId: turn.reasoning.itemId, text: turn.reasoning.text });
    turn.reasoning = null;
  }

  private newItemId(turnId: string, prefix: string): string {
    const key = `${turnId}:${prefix}`;
    const next = (this.itemCounters.get(key) ?? 0) + 1;
    this.itemCounters.set(key, next);
    return `${key}:${next}`;
  }

  private emit(event: AdapterEvent): void {
    try {
      this.input.emit(event);
    } catch (error) {
      this.logger.error("The host's event sink threw", { type: event.type, error: describeError(error) });
    }
  }
}
