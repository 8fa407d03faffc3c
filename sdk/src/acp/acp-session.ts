import * as acp from "@agentclientprotocol/sdk/unstable";
import {
  SwitchyardError,
  UnsupportedCapabilityError,
  type ForkInput,
  type InterruptInput,
  type OpenSessionInput,
  type PluginContext,
  type PluginLogger,
  type ProviderCapabilities,
  type ProviderInstanceDescriptor,
  type ProviderSession,
  type RuntimeRequestResponse,
  type ThreadSnapshot,
  type TurnInput,
} from "@switchyard/spec";
import { EventSink } from "../harness/index.js";
import { openAgentSession, startAgent, type AcpAgentLaunch, type AcpAgentRuntime } from "./acp-agent-runtime.js";
import { SerialQueue, describeError, settleInbound, withTimeout, type AcpClientHandlers } from "./acp-connection.js";
import {
  agentExitReport,
  promptEnding,
  readSessionUpdate,
  replayedTurns,
  type AcpReplayedTurn,
  type AcpUpdateContext,
} from "./acp-events.js";
import { sessionCostUsdOf, withTurnCost } from "./acp-usage.js";
import {
  modeMappingOf,
  type AcpAgentDescription,
  type AcpChannel,
  type AcpChannelFactory,
  type AcpFlavor,
  type AcpSessionHandle,
} from "./acp-flavor.js";
import { ConfinedFileSystem } from "./acp-fs.js";
import { buildAcpMcpServers, type AcpMcpInjection } from "./acp-mcp-injection.js";
import { forkInDisposableAgent } from "./acp-fork.js";
import { AcpRuntimeRequests } from "./acp-runtime-requests.js";
import { sessionClientHandlers, sessionHandle } from "./acp-client-side.js";
import { AcpSessionSettings } from "./acp-session-settings.js";
import { ObservedSubagents } from "./acp-subagents.js";
import { findConfigOption } from "./acp-capabilities.js";
import { AcpTurn } from "./acp-turn.js";

/** What a session needs from its adapter. @public */
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

/**
 * One ACP session, in its own agent process: the process, its connection and the protocol.
 * Turn state lives in {@link AcpTurn} (on the kit's ledger), wire mapping in acp-events.ts.
 * Every event goes through a serial queue: the SDK runs notification handlers concurrently, so
 * handlers only enqueue, and a prompt's end is queued only after every message received before
 * its response has been dispatched. The optional methods exist only when the capabilities the
 * agent negotiated at `initialize` declare them: never `steerTurn` (ACP has no steering),
 * `forkThread` only for an agent that advertises `session/fork`.
 * @public
 */
export class AcpProviderSession<TOptions> implements ProviderSession {
  declare interruptTurn?: (input: InterruptInput) => Promise<void>;
  declare forkThread?: (input: ForkInput) => Promise<{ readonly resumeCursor: string }>;
  declare respondToRuntimeRequest?: (requestId: string, response: RuntimeRequestResponse) => Promise<void>;
  declare readSnapshot?: () => Promise<ThreadSnapshot>;

  readonly #deps: AcpSessionDeps<TOptions>;
  readonly #input: OpenSessionInput;
  readonly #logger: PluginLogger;
  readonly #fs: ConfinedFileSystem;
  readonly #queue: SerialQueue;
  readonly #sink: EventSink;
  readonly #requests: AcpRuntimeRequests;
  readonly #settings: AcpSessionSettings;
  readonly #handle: AcpSessionHandle;
  readonly #updateContext: AcpUpdateContext;
  /** The current agent process, from the moment it is connected (so close can stop a starting one). */
  #channel: AcpChannel | null = null;
  #runtime: AcpAgentRuntime | null = null;
  #generation = 0;
  #acpSessionId: string | null = null;
  #agent: AcpAgentDescription | null = null;
  #turn: AcpTurn | null = null;
  #snapshotTurns: AcpReplayedTurn[] = [];
  /** The updates of a `session/load` replay while it runs. */
  #replay: acp.SessionUpdate[] | null = null;
  /**
   * The session's cost so far as the agent's `usage_update` reports it (cumulative, USD): 0 for a
   * session this process created, null while unknown (a loaded session before its first report).
   */
  #sessionCostUsd: number | null = null;
  /** {@link #sessionCostUsd} when the running turn began: its cost is the difference. */
  #turnCostBaseline: number | null = null;
  #closed = false;
  #started = false;
  #exited = false;
  #restarting: Promise<void> | null = null;
  readonly #itemCounters = new Map<string, number>();
  readonly #subagents = new ObservedSubagents();
  #mcpInjection: AcpMcpInjection = "none";

  constructor(deps: AcpSessionDeps<TOptions>, input: OpenSessionInput) {
    this.#deps = deps;
    this.#input = input;
    const flavor = deps.flavor;
    this.#logger = deps.context.logger.child({
      driver: flavor.driverKind,
      instanceId: deps.instance.id,
      providerSessionId: input.providerSessionId,
    });
    this.#fs = new ConfinedFileSystem(input.cwd);
    this.#queue = new SerialQueue((error) =>
      this.#logger.error("ACP session task failed", { error: describeError(error) }),
    );
    this.#sink = new EventSink(input.emit, this.#logger);
    this.#requests = new AcpRuntimeRequests(
      this.#sink.emit,
      this.#queue,
      () => this.#turn,
      () => this.#closed || this.#exited,
      this.#logger,
    );
    this.#settings = new AcpSessionSettings(
      {
        call: (what, send) => this.#call(what, send),
        warn: (message, turnId) =>
          this.#sink.emit({ type: "warning", ...(turnId !== undefined ? { turnId } : {}), message }),
        mapping: modeMappingOf(flavor, deps.options),
      },
      { model: input.model, runtimeMode: input.runtimeMode, interactionMode: input.interactionMode },
    );
    this.#updateContext = {
      injectedServers: input.mcp !== null ? [input.mcp.serverName] : [],
      toolKind: (call) => flavor.hooks?.toolKind?.(call),
    };
    this.#handle = sessionHandle({
      providerSessionId: input.providerSessionId,
      threadId: input.threadId,
      cwd: input.cwd,
      logger: this.#logger,
      acpSessionId: () => this.#acpSessionId,
      activeTurn: () => this.#turn,
      emit: (event) => void this.#queue.run(() => this.#sink.emit(event)),
      newItemId: (turnId, prefix) => this.#newItemId(turnId, prefix),
      requests: this.#requests,
    });
  }

  /** The ACP session id. */
  get resumeCursor(): string | null {
    return this.#acpSessionId;
  }

  /** How the Switchyard MCP endpoint reached the agent (for diagnostics; never the token). */
  get mcpInjectionKind(): AcpMcpInjection {
    return this.#mcpInjection;
  }

  /** The process id of the current agent, when it runs as a process. */
  get agentPid(): number | undefined {
    return this.#runtime?.channel.pid;
  }

  /** Starts the agent, opens (or resumes) the ACP session and offers the negotiated methods. */
  async start(): Promise<void> {
    await this.#launch(this.#input.resumeCursor, false);
    await this.#settings.reapply(true);
    this.#offerNegotiatedMethods();
    this.#started = true;
    // An agent that died during setup was not reported yet.
    const runtime = this.#runtime;
    if (runtime?.connection.signal.aborted) this.#onAgentGone(runtime.generation, runtime.channel);
  }

  /** The optional methods, each only when this agent's capabilities declare it. */
  #offerNegotiatedMethods(): void {
    const caps = this.#deps.capabilitiesFor(this.#agent as AcpAgentDescription);
    if (caps.turns.interrupt) this.interruptTurn = (input) => this.#interrupt(input);
    if (caps.threads.fork) this.forkThread = (input) => this.#fork(input);
    if (caps.threads.readSnapshot) this.readSnapshot = () => this.#readSnapshot();
    if (caps.runtimeRequests.approvals || caps.runtimeRequests.userInputQuestions) {
      this.respondToRuntimeRequest = (requestId, response) => this.#requests.respond(requestId, response);
    }
  }

  #setupTimeout(): number {
    return this.#deps.flavor.setupTimeoutMs ?? 30_000;
  }

  /** How this session starts an agent process (its own, a respawn, a disposable fork). */
  #agentLaunch(): AcpAgentLaunch<TOptions> {
    const { flavor, instance, options, context, channelFactory } = this.#deps;
    return {
      flavor,
      instance,
      options,
      context,
      channelFactory,
      cwd: this.#input.cwd,
      timeoutMs: this.#setupTimeout(),
      logger: this.#logger,
      session: { environment: this.#input.environment ?? {}, harnessHome: this.#input.harnessHome ?? null },
    };
  }

  async #launch(resumeCursor: string | null, respawn: boolean): Promise<void> {
    this.#sessionCostUsd = resumeCursor === null ? 0 : null;
    const { flavor, options } = this.#deps;
    const generation = ++this.#generation;
    const runtime = await startAgent(
      this.#agentLaunch(),
      generation,
      this.#handlersFor(generation),
      (channel, connection) => {
        if (this.#closed)
          throw new SwitchyardError("session_closed", "The session was closed while its agent was starting.");
        this.#channel = channel;
        void connection.closed.then(() => this.#onAgentGone(generation, channel));
      },
    );
    this.#runtime = runtime;
    const { servers, injection } = buildAcpMcpServers(
      this.#input.mcp,
      runtime.init.agentCapabilities?.mcpCapabilities,
      flavor.mcpTransport ?? "auto",
    );
    this.#mcpInjection = injection;
    this.#logger.debug("MCP endpoint injection", { injection, configured: this.#input.mcp !== null });
    const { runtimeMode, interactionMode } = this.#settings.wanted;
    const meta = flavor.hooks?.sessionMeta?.({ options, runtimeMode, interactionMode });
    const opened = await openAgentSession(
      runtime,
      {
        base: { cwd: this.#input.cwd, mcpServers: servers, ...(meta !== undefined ? { _meta: meta } : {}) },
        resumeCursor,
        respawn,
        replay: {
          begin: (sessionId) => {
            this.#acpSessionId = sessionId;
            this.#replay = [];
          },
          end: async (loaded) => {
            if (loaded) {
              // The replay arrives as session/update before the response; let it all land first.
              await settleInbound();
              await this.#queue.run(() => undefined);
              this.#snapshotTurns = replayedTurns(this.#replay ?? []);
            }
            this.#replay = null;
          },
        },
      },
      flavor,
      this.#setupTimeout(),
    );
    this.#acpSessionId = opened.sessionId;
    if (opened.warning !== undefined) this.#sink.emit({ type: "warning", message: opened.warning });
    this.#agent = { initialize: runtime.init, ...this.#settings.adopt(opened.setup) };
    this.#deps.onNegotiated(this.#agent);
    if (opened.sessionId !== resumeCursor) this.#sink.emit({ type: "session.resume_cursor", cursor: opened.sessionId });
  }

  #onAgentGone(generation: number, channel: AcpChannel): void {
    if (generation !== this.#generation || this.#closed || !this.#started) return;
    void (async () => {
      const exit = await Promise.race([
        channel.exited,
        new Promise<null>((resolve) => setTimeout(() => resolve(null), 2_000).unref()),
      ]);
      await settleInbound();
      await this.#queue.run(() => {
        if (generation !== this.#generation || this.#closed || this.#exited) return;
        this.#exited = true;
        const report = agentExitReport(exit, channel.stderrTail?.());
        this.#logger.warn("ACP agent exited", { reason: report.reason });
        this.#requests.book.cancelTurn(null);
        this.#turn?.finish("failed", { code: "agent_exited", message: report.reason });
        this.#sink.emit({
          type: "session.exited",
          reason: report.reason,
          ...(report.error !== undefined ? { error: report.error } : {}),
        });
      });
      // Reap whatever the agent left in its process group.
      await channel.kill().catch(() => undefined);
    })();
  }

  /** Kills the agent's process group and starts it again, reloading the session when it can. */
  async #respawn(turn: AcpTurn | null, reason: string): Promise<void> {
    const old = this.#runtime;
    this.#generation++;
    this.#restarting = (async () => {
      await this.#queue.run(() => void turn?.finish("interrupted"));
      if (old) {
        old.connection.close();
        await old.channel.kill().catch(() => undefined);
      }
      this.#logger.info("ACP agent respawning", { reason });
      try {
        await this.#launch(this.#acpSessionId, true);
        await this.#settings.reapply(false);
      } catch (error) {
        await this.#queue.run(() => {
          if (this.#closed || this.#exited) return;
          this.#exited = true;
          this.#sink.emit({
            type: "session.exited",
            reason: "The agent could not be restarted after a hard interrupt.",
            error: describeError(error),
          });
        });
        if (this.#runtime && this.#runtime !== old) await this.#runtime.channel.kill().catch(() => undefined);
      }
    })().finally(() => {
      this.#restarting = null;
    });
    await this.#restarting;
  }

  /** Sends a setup request on the current connection, bounded by the setup timeout. */
  #call<T>(what: string, send: (agent: acp.ClientConnection["agent"], sessionId: string) => Promise<T>): Promise<T> {
    const runtime = this.#runtime;
    if (runtime === null || this.#acpSessionId === null)
      return Promise.reject(new SwitchyardError("session_closed", "The session has no open agent connection."));
    return withTimeout(send(runtime.connection.agent, this.#acpSessionId), this.#setupTimeout(), `The agent's ${what}`);
  }

  #handlersFor(generation: number): AcpClientHandlers {
    return sessionClientHandlers({
      stale: () => generation !== this.#generation || this.#closed,
      acpSessionId: () => this.#acpSessionId,
      fs: this.#fs,
      requests: this.#requests,
      onUpdate: (update) => void this.#queue.run(() => this.#applyUpdate(update)),
      isSubagentSession: (sessionId) => this.#subagents.has(sessionId),
      onOtherSessionUpdate: (sessionId, update) =>
        void this.#queue.run(() => this.#applyChildUpdate(sessionId, update)),
      extensions: this.#deps.flavor.extensions,
      handle: this.#handle,
    });
  }

  #assertOpen(): void {
    if (this.#closed)
      throw new SwitchyardError("session_closed", "The session is closed.", {
        providerSessionId: this.#input.providerSessionId,
      });
    if (this.#exited || this.#runtime === null) {
      throw new SwitchyardError(
        "session_closed",
        "The agent process is gone; open a new session (resuming it when the provider can).",
        {
          providerSessionId: this.#input.providerSessionId,
        },
      );
    }
  }

  async startTurn(input: TurnInput): Promise<{ readonly providerTurnId?: string }> {
    if (this.#restarting) await this.#restarting;
    this.#assertOpen();
    // Interrupt-and-restart: the host may start the replacement before the agent has answered
    // session/cancel. The cancel timeout bounds this wait.
    const previous = this.#turn;
    if (previous !== null && !previous.terminated && previous.interruptRequested) await previous.ended;
    if (this.#restarting) await this.#restarting;
    this.#assertOpen();
    if (this.#turn !== null && !this.#turn.terminated) {
      throw new SwitchyardError(
        "conflict",
        `Turn "${this.#turn.turnId}" is still running; ACP sessions run one prompt at a time.`,
        {
          runningTurnId: this.#turn.turnId,
          turnId: input.turnId,
        },
      );
    }
    const runtime = this.#runtime as AcpAgentRuntime;
    await this.#settings.applyTurn(input);
    const turn = new AcpTurn(input, {
      emit: this.#sink.emit,
      requests: this.#requests.book,
      newItemId: (prefix) => this.#newItemId(input.turnId, prefix),
      onEnded: (ended) => {
        this.#snapshotTurns.push(ended.replayed);
        if (this.#turn === ended) this.#turn = null;
      },
    });
    this.#turn = turn;
    this.#turnCostBaseline = this.#sessionCostUsd;
    // ACP has no system prompt: the host already folded any instructions into the text.
    const prompt = runtime.connection.agent.request(acp.methods.agent.session.prompt, {
      sessionId: this.#acpSessionId as string,
      prompt: [{ type: "text", text: turn.promptText }],
    });
    void this.#queue.run(() => turn.start());
    prompt.then(
      (response) => this.#afterPrompt(turn, runtime, { response }),
      (error: unknown) => this.#afterPrompt(turn, runtime, { error }),
    );
    return {};
  }

  async #afterPrompt(
    turn: AcpTurn,
    runtime: AcpAgentRuntime,
    result: { response: acp.PromptResponse } | { error: unknown },
  ): Promise<void> {
    // Updates the agent sent before its response may still be in the SDK's dispatch.
    await settleInbound();
    await this.#queue.run(() => {
      if (turn.terminated) return;
      if ("response" in result) {
        turn.endWith(
          withTurnCost(
            promptEnding(result.response, turn.interruptRequested),
            this.#turnCostBaseline,
            this.#sessionCostUsd,
          ),
        );
        return;
      }
      // A dropped connection is the exit path's to report (with the exit status).
      if (runtime.connection.signal.aborted || runtime.generation !== this.#generation) return;
      turn.finish("failed", describeError(result.error));
    });
  }

  /** `session/cancel` (soft), or kill-and-respawn for a hard stop when the flavor asks for it. */
  async #interrupt(input: InterruptInput): Promise<void> {
    if (this.#restarting) await this.#restarting;
    this.#assertOpen();
    const turn = this.#turn;
    if (turn === null || turn.terminated || turn.turnId !== input.turnId) {
      throw new SwitchyardError("turn_not_active", `Turn "${input.turnId}" is not running.`, { turnId: input.turnId });
    }
    turn.interruptRequested = true;
    const flavor = this.#deps.flavor;
    if (input.hard === true && flavor.hardInterrupt === "respawn") {
      await this.#respawn(turn, input.reason ?? "hard interrupt");
      return;
    }
    const runtime = this.#runtime as AcpAgentRuntime;
    await runtime.connection.agent
      .notify(acp.methods.agent.session.cancel, { sessionId: this.#acpSessionId as string })
      .catch(() => undefined);
    // ACP: after session/cancel the client answers every pending permission request `cancelled`.
    await this.#queue.run(() => this.#requests.book.cancelTurn(turn.turnId));
    turn.armCancelTimer(flavor.cancelTimeoutMs ?? 15_000, () => void this.#onCancelTimeout(turn));
  }

  async #onCancelTimeout(turn: AcpTurn): Promise<void> {
    if (turn.terminated || this.#closed) return;
    if (this.#deps.flavor.hardInterrupt === "respawn") {
      await this.#respawn(turn, "the agent ignored session/cancel");
      return;
    }
    await this.#queue.run(() => {
      if (turn.terminated) return;
      this.#sink.emit({
        type: "warning",
        turnId: turn.turnId,
        message: "The agent did not end the turn after session/cancel; the turn is treated as interrupted.",
      });
      turn.finish("interrupted");
    });
  }

  /**
   * `/unstable` `session/fork` (offered only when the agent advertised it), in a disposable agent
   * process (see acp-fork.ts); ACP forks copy the latest state.
   */
  async #fork(input: ForkInput): Promise<{ readonly resumeCursor: string }> {
    if (input.afterTurnId !== undefined)
      throw new UnsupportedCapabilityError("threads.forkFromTurn", this.#deps.flavor.driverKind);
    this.#assertOpen();
    return { resumeCursor: await forkInDisposableAgent(this.#agentLaunch(), this.#acpSessionId as string) };
  }

  /** The conversation as the agent replayed it at `session/load`, plus the turns since. */
  async #readSnapshot(): Promise<ThreadSnapshot> {
    await this.#queue.run(() => undefined);
    return { turns: this.#snapshotTurns.map((turn) => ({ ...turn })) };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#deps.onClosed?.();
    if (this.#restarting) await this.#restarting.catch(() => undefined);
    // Nothing is reported after close; the agent gets `cancelled` for what it still waits on,
    // and whoever waits for the running turn's end (a restart after an interrupt) is let go.
    this.#sink.close();
    this.#requests.book.cancelTurn(null);
    this.#turn?.finish("interrupted");
    const runtime = this.#runtime;
    const channel = this.#channel;
    this.#runtime = null;
    this.#channel = null;
    runtime?.connection.close();
    await channel?.kill().catch(() => undefined);
  }

  #applyUpdate(update: acp.SessionUpdate): void {
    if (this.#replay !== null) {
      this.#replay.push(update);
      return;
    }
    const cost = sessionCostUsdOf(update);
    if (cost !== null) this.#sessionCostUsd = cost;
    const read = readSessionUpdate(update, this.#updateContext);
    if (read.kind === "mode_changed") return this.#settings.modeChanged(read.currentModeId);
    if (read.kind === "config_changed") return this.#settings.configChanged(read.configOptions);
    // A child's state belongs to the session (children outlive turns), whoever reports it.
    const child = read.kind === "subagent" ? this.#subagents.apply(read.update) : null;
    const turn = this.#turn;
    if (turn === null || turn.terminated) {
      if (read.kind === "notice") this.#sink.emit({ type: "warning", message: read.message });
      else this.#logger.debug("session/update outside a turn ignored", { kind: update.sessionUpdate });
      return;
    }
    if (this.#deps.flavor.hooks?.onSessionUpdate?.(update, this.#handle) === true) return;
    if (child !== null) turn.observeSubagent(child);
    else turn.apply(read);
  }

  /**
   * An update of another session: kept only for a sub-agent this session's agent announced, and
   * only what the parent's view of it needs (its model, its assistant text) while a turn runs.
   */
  #applyChildUpdate(childSessionId: string, update: acp.SessionUpdate): void {
    if (this.#replay !== null || !this.#subagents.has(childSessionId)) return;
    const turn = this.#turn;
    if (turn === null || turn.terminated) return;
    if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") {
      const messageId = (update as { readonly messageId?: unknown }).messageId;
      turn.subagentMessage(childSessionId, typeof messageId === "string" ? messageId : null, update.content.text);
      return;
    }
    if (update.sessionUpdate === "config_option_update") {
      const model = findConfigOption(update.configOptions, "model")?.currentValue;
      const child = typeof model === "string" ? this.#subagents.applyModel(childSessionId, model) : null;
      if (child !== null) turn.observeSubagent(child);
    }
  }

  #newItemId(turnId: string, prefix: string): string {
    const key = `${turnId}:${prefix}`;
    const next = (this.#itemCounters.get(key) ?? 0) + 1;
    this.#itemCounters.set(key, next);
    return `${key}:${next}`;
  }
}
