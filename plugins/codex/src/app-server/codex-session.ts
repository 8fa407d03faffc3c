import {
  EventSink,
  JsonRpcRequestError,
  RuntimeRequestBook,
  SwitchyardError,
  withStderrTail,
  type ForkInput,
  type InterruptInput,
  type OpenSessionInput,
  type PluginLogger,
  type ProcessExit,
  type ProviderTurnError,
  type RuntimeRequestResponse,
  type StartableSession,
  type SteerInput,
  type ThreadSnapshot,
  type TurnInput,
} from "@switchyard/sdk";
import type { ServerNotification } from "../codex-wire.js";
import { appServerModeSettings } from "../shared/codex-runtime-modes.js";
import { codexEventsOf, type CodexEvent } from "./codex-events.js";
import { openCodexThread, spawnAppServer, type CodexLaunchDeps } from "./codex-launch.js";
import type { CodexRpc } from "../shared/codex-rpc.js";
import { CodexServerRequests } from "./codex-server-requests.js";
import { CodexSubagents } from "./codex-subagents.js";
import {
  ThreadUnloads,
  forkRecordedThread,
  recordedCodexTurnId,
  recordedSnapshot,
  type CodexHistorySource,
} from "./codex-thread-history.js";
import { CodexTurn } from "./codex-turn.js";

/** What a session needs from its adapter. */
export interface CodexSessionDeps extends Omit<CodexLaunchDeps, "logger"> {
  /** Called once when the session closes. */
  readonly onClosed?: () => void;
}

/** One app-server process; a stuck interrupt replaces it with the next generation. */
interface Runtime {
  readonly generation: number;
  readonly rpc: CodexRpc;
}

function describeError(error: unknown): ProviderTurnError {
  if (error instanceof JsonRpcRequestError) return { code: String(error.rpcCode), message: error.message };
  if (error instanceof SwitchyardError) return { code: error.code, message: error.message };
  return { message: error instanceof Error ? error.message : String(error) };
}

/**
 * One Switchyard thread on `codex app-server`: its own app-server process (own process group)
 * holding one Codex thread. Notifications of other threads on the connection (Codex sub-agents)
 * are only observed. Every turn-scoped event carries the host's turn id, and every started turn
 * ends with exactly one `turn.terminal`.
 */
export class CodexAppServerSession implements StartableSession {
  readonly #logger: PluginLogger;
  readonly #launchDeps: CodexLaunchDeps;
  readonly #sink: EventSink;
  readonly #requests: RuntimeRequestBook<string | number>;
  readonly #subagents: CodexSubagents;
  readonly #serverRequests: CodexServerRequests;
  #runtime: Runtime | null = null;
  #generation = 0;
  #threadId: string | null = null;
  /** The model the Codex thread runs on (its config's until a turn names one), for the usage Codex reports. */
  #model: string | null = null;
  #turn: CodexTurn | null = null;
  readonly #turnsByCodexId = new Map<string, CodexTurn>();
  readonly #warned = new Set<string>();
  readonly #unloads = new ThreadUnloads();
  #closed = false;
  #exited = false;
  #started = false;
  #restarting: Promise<void> | null = null;

  constructor(
    private readonly deps: CodexSessionDeps,
    private readonly input: OpenSessionInput,
  ) {
    this.#logger = deps.context.logger.child({
      driver: "codex",
      instanceId: deps.instance.id,
      providerSessionId: input.providerSessionId,
    });
    this.#launchDeps = { ...deps, logger: this.#logger };
    this.#sink = new EventSink(input.emit, this.#logger);
    this.#requests = new RuntimeRequestBook(this.#sink.emit, "codex-request");
    this.#subagents = new CodexSubagents(this.#sink.emit);
    this.#serverRequests = new CodexServerRequests({
      logger: this.#logger,
      requests: this.#requests,
      turnForRequest: (threadId, codexTurnId) => this.#turnForRequest(threadId, codexTurnId),
      isSubagentThread: (threadId) => threadId !== this.#threadId && this.#subagents.has(threadId),
      warnOnce: (message) => this.#warnOnce(message),
    });
  }

  /** The native Codex thread id. */
  get resumeCursor(): string | null {
    return this.#threadId;
  }

  /** The app-server's process id (tests read its argv and environment). */
  get appServerPid(): number | undefined {
    return this.#runtime?.rpc.channel.pid;
  }

  /** Starts the app-server and starts (or resumes) the Codex thread. */
  async start(): Promise<void> {
    await this.#launch(this.input.resumeCursor);
    this.#started = true;
    // An exit during the start was not reported (the start failed or had not finished yet).
    const runtime = this.#runtime;
    if (runtime?.rpc.closed) void runtime.rpc.exited.then((exit) => this.#onExit(runtime, exit));
  }

  // ---------------------------------------------------------------------------------------
  // Process lifecycle

  async #launch(resumeCursor: string | null): Promise<void> {
    const generation = ++this.#generation;
    const current = () => generation === this.#generation && !this.#closed;
    const rpc = spawnAppServer(this.#launchDeps, this.input, {
      onNotification: (notification) => {
        if (current()) this.#onNotification(notification);
      },
      onRequest: (request) =>
        current() ? this.#serverRequests.handle(request) : Promise.reject(new Error("The session is closed.")),
    });
    const runtime: Runtime = { generation, rpc };
    this.#runtime = runtime;
    void rpc.exited.then((exit) => this.#onExit(runtime, exit));
    if (this.#closed) {
      await rpc.stop();
      throw new SwitchyardError("session_closed", "The session was closed while codex app-server was starting.");
    }
    const thread = await openCodexThread(rpc, this.#launchDeps, this.input, resumeCursor);
    this.#threadId = thread.threadId;
    this.#model = thread.model;
    if (thread.created) this.#sink.emit({ type: "session.resume_cursor", cursor: thread.threadId });
  }

  #onExit(runtime: Runtime, exit: ProcessExit): void {
    if (runtime.generation !== this.#generation || this.#closed || !this.#started || this.#exited) return;
    this.#exited = true;
    const reason = withStderrTail(
      `codex app-server exited (code ${exit.exitCode ?? "none"}, signal ${exit.signal ?? "none"}).`,
      runtime.rpc.channel.stderr,
    );
    this.#logger.warn("codex app-server exited", { reason });
    this.#requests.cancelTurn(null, "cancelled");
    this.#turn?.finish("failed", { code: "app_server_exited", message: reason });
    const clean = exit.exitCode === 0;
    this.#sink.emit({
      type: "session.exited",
      reason,
      ...(clean
        ? {}
        : { error: { code: exit.exitCode !== null ? String(exit.exitCode) : "app_server_exited", message: reason } }),
    });
    // Whatever the app-server started (a tool's processes) goes with it.
    void runtime.rpc.channel.process.kill("SIGTERM", 1_000).catch(() => undefined);
  }

  /** Kills the app-server and starts a new one on the same Codex thread (a stuck interrupt). */
  async #respawn(turn: CodexTurn, reason: string): Promise<void> {
    const old = this.#runtime;
    this.#generation++;
    this.#restarting = (async () => {
      this.#sink.emit({ type: "warning", turnId: turn.hostTurnId, message: `Restarting codex app-server: ${reason}.` });
      turn.finish("interrupted");
      if (old !== null) await old.rpc.stop();
      this.#logger.info("codex app-server respawning", { reason });
      try {
        await this.#launch(this.#threadId);
      } catch (error) {
        if (!this.#closed && !this.#exited) {
          this.#exited = true;
          this.#sink.emit({
            type: "session.exited",
            reason: "codex app-server could not be restarted after an interrupt.",
            error: describeError(error),
          });
        }
        if (this.#runtime !== null && this.#runtime !== old) await this.#runtime.rpc.stop();
      }
    })().finally(() => {
      this.#restarting = null;
    });
    await this.#restarting;
  }

  /** The live runtime and thread, after any restart in progress; `session_closed` when gone. */
  async #open(): Promise<{ readonly rpc: CodexRpc; readonly threadId: string }> {
    if (this.#restarting) await this.#restarting;
    if (this.#closed)
      throw new SwitchyardError("session_closed", "The session is closed.", {
        providerSessionId: this.input.providerSessionId,
      });
    const runtime = this.#runtime;
    if (this.#exited || runtime === null || runtime.rpc.closed || this.#threadId === null) {
      throw new SwitchyardError(
        "session_closed",
        "codex app-server is gone; open a new session (it resumes the Codex thread).",
        {
          providerSessionId: this.input.providerSessionId,
        },
      );
    }
    return { rpc: runtime.rpc, threadId: this.#threadId };
  }

  #history(rpc: CodexRpc, threadId: string): CodexHistorySource {
    return { rpc, threadId, timeoutMs: this.deps.options.requestTimeoutMs };
  }

  // ---------------------------------------------------------------------------------------
  // Turns

  async startTurn(input: TurnInput): Promise<{ readonly providerTurnId?: string }> {
    await this.#open();
    const previous = this.#turn;
    // Interrupt-and-restart: Codex treats turn/start on an active turn as a steer, so the
    // replacement waits until the interrupted turn has ended (bounded by the interrupt timer).
    if (previous !== null && !previous.terminated && previous.interruptRequested) await previous.ended;
    const { rpc, threadId } = await this.#open();
    if (this.#turn !== null && !this.#turn.terminated) {
      throw new SwitchyardError(
        "conflict",
        `Turn "${this.#turn.hostTurnId}" is still running; steer it or interrupt it first.`,
        {
          runningTurnId: this.#turn.hostTurnId,
          turnId: input.turnId,
        },
      );
    }
    const mode = appServerModeSettings(input.runtimeMode);
    const instructions = input.instructions?.trim() ?? "";
    if (instructions.length > 0) {
      // The developer channel for this turn: a developer message appended to the history.
      await rpc.request(
        "thread/inject_items",
        {
          threadId,
          items: [{ type: "message", role: "developer", content: [{ type: "input_text", text: instructions }] }],
        },
        this.deps.options.requestTimeoutMs,
      );
    }
    // Codex keeps a turn's model for the turns after it.
    if (input.model !== null) this.#model = input.model;
    const turn = new CodexTurn(
      input.turnId,
      input.runtimeMode,
      { emit: this.#sink.emit, requests: this.#requests, subagents: this.#subagents },
      this.#model,
    );
    this.#turn = turn;
    try {
      const response = await rpc.request(
        "turn/start",
        {
          threadId,
          input: [{ type: "text", text: input.text, text_elements: [] }],
          // Recorded on the user message: maps the host's turn to Codex's after a restart (fork).
          clientUserMessageId: input.turnId,
          approvalPolicy: mode.approvalPolicy,
          sandboxPolicy: mode.sandboxPolicy,
          ...(input.model !== null ? { model: input.model } : {}),
          // Codex keeps a turn's effort for the turns after it, so every turn says its own.
          ...(input.effort != null ? { effort: input.effort } : {}),
        },
        this.deps.options.requestTimeoutMs,
      );
      this.#bind(turn, response.turn.id);
      return { providerTurnId: response.turn.id };
    } catch (error) {
      if (this.#turn === turn) this.#turn = null;
      turn.abandon();
      throw new SwitchyardError(
        error instanceof SwitchyardError ? error.code : "provider_error",
        `Codex refused turn/start: ${describeError(error).message}`,
        {
          turnId: input.turnId,
        },
      );
    }
  }

  /** Ties a Codex turn id to the host's turn (on `turn/start`'s answer or on `turn/started`). */
  #bind(turn: CodexTurn, codexTurnId: string): void {
    if (turn.codexTurnId === null) this.#turnsByCodexId.set(codexTurnId, turn);
    turn.bind(codexTurnId);
  }

  /**
   * The host turn a Codex turn id belongs to. Unknown ids belong to no turn: a resumed thread
   * reports its last (older) turn's usage, which must not be taken for the turn being started.
   */
  #turnFor(codexTurnId: string): CodexTurn | null {
    return this.#turnsByCodexId.get(codexTurnId) ?? null;
  }

  /**
   * The running turn a request belongs to: this thread's turn (a missing id, an elicitation Codex
   * could not correlate, means the running one), or the running turn for a sub-agent's request.
   */
  #turnForRequest(threadId: string, codexTurnId: string | null): CodexTurn | null {
    if (this.#closed || this.#exited) return null;
    const running = this.#turn !== null && !this.#turn.terminated ? this.#turn : null;
    if (threadId !== this.#threadId) return this.#subagents.has(threadId) ? running : null;
    if (codexTurnId === null) return running;
    const turn = this.#turnFor(codexTurnId);
    return turn !== null && !turn.terminated ? turn : null;
  }

  #activeTurn(turnId: string): CodexTurn {
    const turn = this.#turn;
    if (turn === null || turn.terminated || turn.hostTurnId !== turnId) {
      throw new SwitchyardError("turn_not_active", `Turn "${turnId}" is not running.`, { turnId });
    }
    return turn;
  }

  /** Native steering: `turn/steer` with the running turn as `expectedTurnId`. */
  async steerTurn(input: SteerInput): Promise<void> {
    const { rpc, threadId } = await this.#open();
    const turn = this.#activeTurn(input.turnId);
    const codexTurnId = await turn.announcedId();
    if (codexTurnId === null || turn.terminated)
      throw new SwitchyardError("turn_not_active", `Turn "${input.turnId}" ended before it could be steered.`, {
        turnId: input.turnId,
      });
    try {
      await turn.whileStarting(() =>
        rpc.request("turn/steer", {
          threadId,
          expectedTurnId: codexTurnId,
          input: [{ type: "text", text: input.text, text_elements: [] }],
        }),
      );
    } catch (error) {
      if (error instanceof JsonRpcRequestError)
        throw new SwitchyardError("turn_not_active", `Codex did not take the steer: ${error.message}`, {
          turnId: input.turnId,
        });
      throw error;
    }
  }

  /** `turn/interrupt`; if the turn has not ended within the timeout, the app-server is restarted. */
  async interruptTurn(input: InterruptInput): Promise<void> {
    const { rpc, threadId } = await this.#open();
    const turn = this.#activeTurn(input.turnId);
    turn.interruptRequested = true;
    const codexTurnId = await turn.announcedId();
    if (turn.terminated) return;
    if (codexTurnId === null)
      throw new SwitchyardError("turn_not_active", `Turn "${input.turnId}" never started at Codex.`, {
        turnId: input.turnId,
      });
    try {
      await turn.whileStarting(() =>
        rpc.request("turn/interrupt", { threadId, turnId: codexTurnId }, this.deps.options.requestTimeoutMs),
      );
    } catch (error) {
      // "no active turn to interrupt": Codex ended it meanwhile; its turn/completed settles it.
      if (turn.terminated) return;
      if (!(error instanceof JsonRpcRequestError)) throw error;
      this.#logger.debug("turn/interrupt refused", { error: error.message });
    }
    this.#requests.cancelTurn(turn.hostTurnId, "cancelled");
    if (turn.terminated) return;
    const grace =
      input.hard === true
        ? Math.min(3_000, this.deps.options.interruptTimeoutMs)
        : this.deps.options.interruptTimeoutMs;
    turn.interruptTimer = setTimeout(() => {
      if (!turn.terminated && !this.#closed)
        void this.#respawn(turn, `the interrupted turn did not end within ${grace} ms`);
    }, grace);
    turn.interruptTimer.unref();
  }

  // ---------------------------------------------------------------------------------------
  // Threads

  /** A native fork, of the whole thread or through a host turn (found again after a restart). */
  async forkThread(input: ForkInput): Promise<{ readonly resumeCursor: string }> {
    const { rpc, threadId } = await this.#open();
    let lastTurnId: string | undefined;
    if (input.afterTurnId !== undefined) {
      const { afterTurnId } = input;
      const known =
        [...this.#turnsByCodexId.values()].find((turn) => turn.hostTurnId === afterTurnId)?.codexTurnId ?? null;
      const found = known ?? (await recordedCodexTurnId(this.#history(rpc, threadId), afterTurnId));
      if (found === null)
        throw new SwitchyardError("not_found", `Turn "${afterTurnId}" is not part of Codex thread "${threadId}".`, {
          turnId: afterTurnId,
        });
      lastTurnId = found;
    }
    const fork = {
      ...(lastTurnId !== undefined ? { lastTurnId } : {}),
      cwd: this.input.cwd,
      mode: appServerModeSettings(this.input.runtimeMode),
    };
    return { resumeCursor: await forkRecordedThread(this.#history(rpc, threadId), fork, this.#unloads) };
  }

  /** The conversation as Codex recorded it (`thread/turns/list`, oldest first). */
  async readSnapshot(): Promise<ThreadSnapshot> {
    const { rpc, threadId } = await this.#open();
    return recordedSnapshot(this.#history(rpc, threadId));
  }

  /** Answers an approval this session opened (a dismissal answers Codex `cancel`). */
  async respondToRuntimeRequest(requestId: string, response: RuntimeRequestResponse): Promise<void> {
    this.#requests.respond(requestId, response);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#sink.close();
    this.deps.onClosed?.();
    if (this.#restarting) await this.#restarting.catch(() => undefined);
    // Codex is answered `cancel` for what still waits; nothing more is reported.
    this.#requests.cancelTurn(null, "cancelled");
    if (this.#turn?.interruptTimer) clearTimeout(this.#turn.interruptTimer);
    const runtime = this.#runtime;
    this.#runtime = null;
    if (runtime !== null) await runtime.rpc.stop();
  }

  // ---------------------------------------------------------------------------------------
  // Notifications (synchronous, in arrival order)

  #onNotification(notification: ServerNotification): void {
    for (const event of codexEventsOf(notification, { threadId: this.#threadId, grant: this.input.mcp }))
      this.#onEvent(event);
  }

  #onEvent(event: CodexEvent): void {
    switch (event.kind) {
      case "turn_started": {
        // Codex answers turn/start first, then announces the turn; both bind it, whichever this
        // handler sees first (the answer's continuation runs after the lines that came with it).
        const current = this.#turn;
        if (
          current !== null &&
          current.codexTurnId === null &&
          !current.terminated &&
          !this.#turnsByCodexId.has(event.codexTurnId)
        )
          this.#bind(current, event.codexTurnId);
        this.#turnFor(event.codexTurnId)?.markAnnounced();
        return;
      }
      case "turn":
        this.#turnFor(event.codexTurnId)?.apply(event.change);
        return;
      case "retrying": {
        const turn = this.#turnFor(event.codexTurnId);
        this.#sink.emit({
          type: "warning",
          ...(turn !== null ? { turnId: turn.hostTurnId } : {}),
          message: event.message,
        });
        return;
      }
      case "child_message":
      case "child_turn_completed":
        this.#subagents.observe(event);
        return;
      case "thread_closed":
        this.#unloads.closed(event.threadId);
        return;
      case "request_resolved": {
        const open = this.#requests.find((rpcId) => rpcId === event.rpcId);
        if (open !== undefined) this.#requests.cancel(open.requestId);
        return;
      }
      case "notice":
        this.#warnOnce(event.message);
        return;
    }
  }

  #warnOnce(message: string): void {
    if (this.#warned.has(message)) return;
    this.#warned.add(message);
    this.#sink.emit({ type: "warning", message });
  }
}
