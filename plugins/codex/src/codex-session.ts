import {
  withStderrTail,
  SwitchyardError,
  type AdapterEvent,
  type ApprovalRequest,
  type ForkInput,
  type InterruptInput,
  type ManagedProcess,
  type OpenSessionInput,
  type PluginContext,
  type PluginLogger,
  type ProviderInstanceDescriptor,
  type ProviderSession,
  type ProviderTurnError,
  type RuntimeMode,
  type RuntimeRequestResponse,
  type SnapshotTurn,
  type SteerInput,
  type ThreadSnapshot,
  type TurnInput,
  type TurnTerminalStatus,
} from "@switchyard/sdk";
import { AppServerConnection, AppServerRequestError } from "./app-server-connection.js";
import { approvalRequestOf, approvalResponseOf, isToolCallApproval, type ApprovalMethod } from "./codex-approvals.js";
import type { CodexBinary } from "./codex-binary.js";
import { codexEnvironment } from "./codex-environment.js";
import { reasoningText, toolCallEnd, toolCallStart, userMessageText } from "./codex-items.js";
import { codexThreadMcpConfig } from "./codex-mcp-config.js";
import type { CodexOptions } from "./codex-options.js";
import { appServerModeSettings } from "./codex-runtime-modes.js";
import type { JsonValue, ServerNotification, ServerRequest, ServerRequestParams, v2 } from "./codex-wire.js";

/** What a session needs from its adapter. */
export interface CodexSessionDeps {
  readonly instance: ProviderInstanceDescriptor;
  readonly options: CodexOptions;
  readonly context: PluginContext;
  readonly binary: CodexBinary;
  /** Called once when the session closes. */
  readonly onClosed?: () => void;
}

interface ToolState {
  done: boolean;
}

interface TurnState {
  readonly hostTurnId: string;
  readonly runtimeMode: RuntimeMode;
  codexTurnId: string | null;
  startedEmitted: boolean;
  terminated: boolean;
  interruptRequested: boolean;
  /** Open agent messages and reasoning items (id → text so far). */
  readonly messages: Map<string, string>;
  readonly reasoning: Map<string, string>;
  readonly tools: Map<string, ToolState>;
  /** File-change items, for approval titles. */
  readonly fileChanges: Map<string, Extract<v2.ThreadItem, { type: "fileChange" }>>;
  readonly declined: Set<string>;
  lastError: ProviderTurnError | null;
  usage: { inputTokens: number; outputTokens: number } | null;
  interruptTimer: NodeJS.Timeout | null;
  /** Settles with the Codex turn id once `turn/start` answered (or the turn ended). */
  readonly codexTurnIdKnown: Promise<string | null>;
  resolveCodexTurnId(id: string | null): void;
  /**
   * Settles once Codex announced the turn (`turn/started`) or it ended. Codex answers turn/start
   * before the turn is active: a steer or interrupt sent in between is refused ("no active turn").
   */
  readonly announced: Promise<void>;
  markAnnounced(): void;
  /** Settles when the turn's terminal has been emitted. */
  readonly ended: Promise<void>;
  markEnded(): void;
}

type RuntimeOutcome = { readonly kind: "answered"; readonly response: RuntimeRequestResponse } | { readonly kind: "cancelled" };

interface PendingRuntimeRequest {
  readonly requestId: string;
  readonly hostTurnId: string;
  readonly kind: "approval" | "user_input";
  /** The JSON-RPC id of the Codex request (for `serverRequest/resolved`). */
  readonly rpcId: string | number;
  settle(outcome: RuntimeOutcome): boolean;
}

interface ChildThread {
  readonly hostTurnId: string;
  readonly title: string | null;
  lastText: string | null;
  finished: boolean;
}

interface Runtime {
  readonly generation: number;
  readonly process: ManagedProcess;
  readonly connection: AppServerConnection;
}

const CLIENT_NAME = "switchyard";

/** How long a steer or interrupt waits for Codex to announce a turn it accepted. */
const ANNOUNCE_WAIT_MS = 5_000;
/** Retries of a steer or interrupt Codex refused because the turn is not active yet. */
const NOT_ACTIVE_RETRIES = 20;
const NOT_ACTIVE_RETRY_MS = 50;

function describeError(error: unknown): ProviderTurnError {
  if (error instanceof AppServerRequestError) return { code: String(error.rpcCode), message: error.message };
  if (error instanceof SwitchyardError) return { code: error.code, message: error.message };
  return { message: error instanceof Error ? error.message : String(error) };
}

function codexErrorCode(info: v2.CodexErrorInfo | null): string | undefined {
  if (info === null) return undefined;
  if (typeof info === "string") return info;
  const [key] = Object.keys(info);
  return key;
}

/**
 * One Switchyard thread on `codex app-server`: its own app-server process (own process group)
 * holding one Codex thread. Notifications of other threads on the connection (Codex sub-agents)
 * are only observed. Every turn-scoped event carries the host's turn id, and every started turn
 * ends with exactly one `turn.terminal`.
 */
export class CodexAppServerSession implements ProviderSession {
  private readonly logger: PluginLogger;
  private runtime: Runtime | null = null;
  private generation = 0;
  private threadId: string | null = null;
  private turn: TurnState | null = null;
  private readonly turnsByCodexId = new Map<string, TurnState>();
  private readonly pending = new Map<string, PendingRuntimeRequest>();
  private readonly children = new Map<string, ChildThread>();
  private readonly warned = new Set<string>();
  /** Waiters for `thread/closed` of threads this process let go of (forks). */
  private readonly closingThreads = new Map<string, () => void>();
  private requestCounter = 0;
  private closed = false;
  private exited = false;
  private started = false;
  private restarting: Promise<void> | null = null;

  constructor(
    private readonly deps: CodexSessionDeps,
    private readonly input: OpenSessionInput,
  ) {
    this.logger = deps.context.logger.child({ driver: "codex", instanceId: deps.instance.id, providerSessionId: input.providerSessionId });
  }

  /** The native Codex thread id. */
  get resumeCursor(): string | null {
    return this.threadId;
  }

  /** The app-server's process id (tests read its argv and environment). */
  get appServerPid(): number | undefined {
    return this.runtime?.process.pid;
  }

  /** Starts the app-server and starts (or resumes) the Codex thread. */
  async start(): Promise<void> {
    await this.launch(this.input.resumeCursor);
    this.started = true;
    if (this.runtime?.connection.closed) this.onExit(this.runtime);
  }

  // ---------------------------------------------------------------------------------------
  // Process lifecycle

  private async launch(resumeCursor: string | null): Promise<void> {
    const { context, binary, instance, options } = this.deps;
    const env = codexEnvironment({ instance, binary, grant: this.input.mcp });
    const child = context.process.spawn(binary.command, ["app-server"], {
      cwd: this.input.cwd,
      env,
      extendEnv: false,
      stdin: "pipe",
      label: "codex app-server",
    });
    const generation = ++this.generation;
    const connection = new AppServerConnection(
      child,
      this.logger,
      (notification) => {
        if (generation === this.generation && !this.closed) this.onNotification(notification);
      },
      (request) => (generation === this.generation && !this.closed ? this.onServerRequest(request) : Promise.reject(new Error("The session is closed."))),
    );
    const runtime: Runtime = { generation, process: child, connection };
    this.runtime = runtime;
    connection.onClosed(() => this.onExit(runtime));
    this.logger.info("codex app-server started", { pid: child.pid, command: binary.command, mcp: this.input.mcp !== null });
    if (this.closed) {
      await this.stopProcess(runtime);
      throw new SwitchyardError("session_closed", "The session was closed while codex app-server was starting.");
    }

    const timeout = options.requestTimeoutMs;
    try {
      await connection.request(
        "initialize",
        { clientInfo: { name: CLIENT_NAME, title: "Switchyard", version: context.hostVersion }, capabilities: null },
        timeout,
      );
      connection.notify("initialized");
    } catch (error) {
      throw this.startFailure("initialize", error, connection);
    }

    const mode = appServerModeSettings(this.input.runtimeMode);
    // A JSON copy: the wire type is JsonValue (no readonly arrays); the MCP entries win over options.
    const config = JSON.parse(JSON.stringify({ ...options.config, ...codexThreadMcpConfig(this.input.mcp) })) as Record<string, JsonValue>;
    const model = this.input.model ?? undefined;
    // Only the names of the injected servers are logged; the token is in the child's env only.
    this.logger.debug("codex thread config", { mcpServers: Object.keys(config).filter((key) => key.startsWith("mcp_servers.")) });
    if (resumeCursor !== null) {
      try {
        const resumed = await connection.request(
          "thread/resume",
          { threadId: resumeCursor, cwd: this.input.cwd, approvalPolicy: mode.approvalPolicy, sandbox: mode.sandbox, config, excludeTurns: true, ...(model ? { model } : {}) },
          timeout,
        );
        this.threadId = resumed.thread.id;
      } catch (error) {
        if (error instanceof AppServerRequestError && /no rollout found|invalid session id/i.test(error.message)) {
          throw new SwitchyardError("not_found", `Codex has no thread "${resumeCursor}" to resume in this CODEX_HOME.`, { resumeCursor });
        }
        throw this.startFailure("thread/resume", error, connection);
      }
      return;
    }
    try {
      const started = await connection.request(
        "thread/start",
        {
          cwd: this.input.cwd,
          approvalPolicy: mode.approvalPolicy,
          sandbox: mode.sandbox,
          config,
          ...(model ? { model } : {}),
        },
        timeout,
      );
      this.threadId = started.thread.id;
    } catch (error) {
      throw this.startFailure("thread/start", error, connection);
    }
    this.emit({ type: "session.resume_cursor", cursor: this.threadId });
  }

  private startFailure(step: string, error: unknown, connection: AppServerConnection): SwitchyardError {
    if (error instanceof SwitchyardError && error.code !== "session_closed") {
      return new SwitchyardError(error.code, withStderrTail(error.message, connection.stderr), error.details === undefined ? undefined : { ...error.details });
    }
    const message = describeError(error).message;
    return new SwitchyardError("provider_unavailable", withStderrTail(`codex app-server failed during ${step}: ${message}`, connection.stderr), { step });
  }

  private async stopProcess(runtime: Runtime): Promise<void> {
    runtime.connection.close();
    // Closing stdin makes the app-server exit on its own; the group kill reaps what it started.
    runtime.process.stdin?.end();
    await Promise.race([runtime.process.exited, new Promise((resolve) => setTimeout(resolve, 500).unref())]);
    await runtime.process.kill("SIGTERM", 2_000).catch(() => undefined);
  }

  private onExit(runtime: Runtime): void {
    if (runtime.generation !== this.generation || this.closed || !this.started || this.exited) return;
    void (async () => {
      const exit = await Promise.race([runtime.process.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 2_000).unref())]);
      if (runtime.generation !== this.generation || this.closed || this.exited) return;
      this.exited = true;
      const how = exit === null ? "closed its output" : `exited (code ${exit.exitCode ?? "none"}, signal ${exit.signal ?? "none"})`;
      const reason = withStderrTail(`codex app-server ${how}.`, runtime.connection.stderr);
      this.logger.warn("codex app-server exited", { reason });
      this.cancelPending(null, "cancelled");
      if (this.turn !== null && !this.turn.terminated) this.finishTurn(this.turn, "failed", { code: "app_server_exited", message: reason });
      const clean = exit !== null && exit.exitCode === 0;
      this.emit({ type: "session.exited", reason, ...(clean ? {} : { error: { code: exit?.exitCode != null ? String(exit.exitCode) : "app_server_exited", message: reason } }) });
      await runtime.process.kill("SIGTERM", 1_000).catch(() => undefined);
    })();
  }

  /** Kills the app-server and starts a new one on the same Codex thread (a stuck interrupt). */
  private async respawn(turn: TurnState, reason: string): Promise<void> {
    const old = this.runtime;
    this.generation++;
    this.restarting = (async () => {
      this.cancelPending(turn.hostTurnId, "cancelled");
      this.emit({ type: "warning", turnId: turn.hostTurnId, message: `Restarting codex app-server: ${reason}.` });
      this.finishTurn(turn, "interrupted");
      if (old !== null) await this.stopProcess(old);
      this.logger.info("codex app-server respawning", { reason });
      try {
        await this.launch(this.threadId);
      } catch (error) {
        if (!this.closed && !this.exited) {
          this.exited = true;
          this.emit({ type: "session.exited", reason: "codex app-server could not be restarted after an interrupt.", error: describeError(error) });
        }
        if (this.runtime !== null && this.runtime !== old) await this.stopProcess(this.runtime);
      }
    })().finally(() => {
      this.restarting = null;
    });
    await this.restarting;
  }

  private assertOpen(): Runtime {
    if (this.closed) throw new SwitchyardError("session_closed", "The session is closed.", { providerSessionId: this.input.providerSessionId });
    const runtime = this.runtime;
    if (this.exited || runtime === null || runtime.connection.closed || this.threadId === null) {
      throw new SwitchyardError("session_closed", "codex app-server is gone; open a new session (it resumes the Codex thread).", {
        providerSessionId: this.input.providerSessionId,
      });
    }
    return runtime;
  }

  // ---------------------------------------------------------------------------------------
  // Turns

  async startTurn(input: TurnInput): Promise<{ readonly providerTurnId?: string }> {
    if (this.restarting) await this.restarting;
    this.assertOpen();
    const previous = this.turn;
    if (previous !== null && !previous.terminated && previous.interruptRequested) {
      // Interrupt-and-restart: Codex treats turn/start on an active turn as a steer, so the
      // replacement waits until the interrupted turn has ended (bounded by the interrupt timer).
      await previous.ended;
      if (this.restarting) await this.restarting;
    }
    const runtime = this.assertOpen();
    if (this.turn !== null && !this.turn.terminated) {
      throw new SwitchyardError("conflict", `Turn "${this.turn.hostTurnId}" is still running; steer it or interrupt it first.`, {
        runningTurnId: this.turn.hostTurnId,
        turnId: input.turnId,
      });
    }
    const threadId = this.threadId as string;
    const mode = appServerModeSettings(input.runtimeMode);
    const instructions = input.instructions?.trim() ?? "";
    if (instructions.length > 0) {
      // The developer channel for this turn: a developer message appended to the history.
      await runtime.connection.request(
        "thread/inject_items",
        { threadId, items: [{ type: "message", role: "developer", content: [{ type: "input_text", text: instructions }] }] },
        this.deps.options.requestTimeoutMs,
      );
    }
    const turn = this.newTurn(input);
    this.turn = turn;
    let response;
    try {
      response = await runtime.connection.request("turn/start", {
        threadId,
        input: [{ type: "text", text: input.text, text_elements: [] }],
        // Recorded on the user message: maps the host's turn to Codex's after a restart (fork).
        clientUserMessageId: input.turnId,
        approvalPolicy: mode.approvalPolicy,
        sandboxPolicy: mode.sandboxPolicy,
        ...(input.model !== null ? { model: input.model } : {}),
      }, this.deps.options.requestTimeoutMs);
    } catch (error) {
      if (this.turn === turn) this.turn = null;
      turn.terminated = true;
      turn.resolveCodexTurnId(null);
      turn.markAnnounced();
      turn.markEnded();
      const described = describeError(error);
      throw new SwitchyardError(error instanceof SwitchyardError ? error.code : "provider_error", `Codex refused turn/start: ${described.message}`, {
        turnId: input.turnId,
      });
    }
    this.bindTurn(turn, response.turn.id);
    return { providerTurnId: response.turn.id };
  }

  private newTurn(input: TurnInput): TurnState {
    let resolveCodexTurnId!: (id: string | null) => void;
    const codexTurnIdKnown = new Promise<string | null>((resolve) => {
      resolveCodexTurnId = resolve;
    });
    let markEnded!: () => void;
    const ended = new Promise<void>((resolve) => {
      markEnded = resolve;
    });
    let markAnnounced!: () => void;
    const announced = new Promise<void>((resolve) => {
      markAnnounced = resolve;
    });
    return {
      hostTurnId: input.turnId,
      runtimeMode: input.runtimeMode,
      codexTurnId: null,
      startedEmitted: false,
      terminated: false,
      interruptRequested: false,
      messages: new Map(),
      reasoning: new Map(),
      tools: new Map(),
      fileChanges: new Map(),
      declined: new Set(),
      lastError: null,
      usage: null,
      interruptTimer: null,
      codexTurnIdKnown,
      resolveCodexTurnId,
      announced,
      markAnnounced,
      ended,
      markEnded,
    };
  }

  /** Ties a Codex turn id to the host's turn (on `turn/start`'s answer or on `turn/started`). */
  private bindTurn(turn: TurnState, codexTurnId: string): void {
    if (turn.codexTurnId === null) {
      turn.codexTurnId = codexTurnId;
      this.turnsByCodexId.set(codexTurnId, turn);
      turn.resolveCodexTurnId(codexTurnId);
    }
    if (!turn.startedEmitted && !turn.terminated) {
      turn.startedEmitted = true;
      this.emit({ type: "turn.started", turnId: turn.hostTurnId, providerTurnId: codexTurnId });
    }
  }

  /**
   * The host turn a Codex turn id belongs to. Unknown ids belong to no turn: a resumed thread
   * reports its last (older) turn's usage, which must not be taken for the turn being started.
   * A missing id (an elicitation Codex could not correlate) means the running turn.
   */
  private turnFor(codexTurnId: string | null | undefined): TurnState | null {
    if (codexTurnId === null || codexTurnId === undefined) return this.turn !== null && !this.turn.terminated ? this.turn : null;
    return this.turnsByCodexId.get(codexTurnId) ?? null;
  }

  /** Ends a turn: closes open tool calls, settles its requests, emits the one terminal. */
  private finishTurn(turn: TurnState, status: TurnTerminalStatus, error?: ProviderTurnError): void {
    if (turn.terminated) return;
    if (!turn.startedEmitted && turn.codexTurnId !== null) this.bindTurn(turn, turn.codexTurnId);
    turn.terminated = true;
    if (turn.interruptTimer !== null) clearTimeout(turn.interruptTimer);
    for (const [itemId, tool] of turn.tools) {
      if (tool.done) continue;
      tool.done = true;
      this.emit({ type: "tool_call.completed", turnId: turn.hostTurnId, itemId, status: turn.declined.has(itemId) ? "declined" : status === "completed" ? "completed" : "failed" });
    }
    // Open messages stay open: the host keeps their streamed text as partial output.
    this.cancelPending(turn.hostTurnId, "cancelled");
    this.emit({
      type: "turn.terminal",
      turnId: turn.hostTurnId,
      status,
      ...(error !== undefined ? { error } : {}),
      ...(turn.usage !== null ? { usage: turn.usage } : {}),
    });
    if (this.turn === turn) this.turn = null;
    turn.resolveCodexTurnId(turn.codexTurnId);
    turn.markAnnounced();
    turn.markEnded();
  }

  private activeTurn(turnId: string): TurnState {
    const turn = this.turn;
    if (turn === null || turn.terminated || turn.hostTurnId !== turnId) {
      throw new SwitchyardError("turn_not_active", `Turn "${turnId}" is not running.`, { turnId });
    }
    return turn;
  }

  /** Native steering: `turn/steer` with the running turn as `expectedTurnId`. */
  async steerTurn(input: SteerInput): Promise<void> {
    if (this.restarting) await this.restarting;
    const runtime = this.assertOpen();
    const turn = this.activeTurn(input.turnId);
    const codexTurnId = await this.announcedTurnId(turn);
    if (codexTurnId === null || turn.terminated) throw new SwitchyardError("turn_not_active", `Turn "${input.turnId}" ended before it could be steered.`, { turnId: input.turnId });
    try {
      await this.whileStarting(turn, () =>
        runtime.connection.request("turn/steer", {
          threadId: this.threadId as string,
          expectedTurnId: codexTurnId,
          input: [{ type: "text", text: input.text, text_elements: [] }],
        }),
      );
    } catch (error) {
      if (error instanceof AppServerRequestError) {
        throw new SwitchyardError("turn_not_active", `Codex did not take the steer: ${error.message}`, { turnId: input.turnId });
      }
      throw error;
    }
  }

  /** The turn's Codex id once Codex announced it (null when it ended first). */
  private async announcedTurnId(turn: TurnState): Promise<string | null> {
    const codexTurnId = await turn.codexTurnIdKnown;
    if (codexTurnId === null) return null;
    await Promise.race([turn.announced, new Promise((resolve) => setTimeout(resolve, ANNOUNCE_WAIT_MS).unref())]);
    return turn.terminated ? null : codexTurnId;
  }

  /**
   * Runs a turn operation, retrying briefly while Codex says the turn is not active yet (it can
   * answer turn/start before the turn runs).
   */
  private async whileStarting<T>(turn: TurnState, operation: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await operation();
      } catch (error) {
        const notYet = error instanceof AppServerRequestError && /no active turn/i.test(error.message);
        if (!notYet || turn.terminated || attempt >= NOT_ACTIVE_RETRIES) throw error;
        await new Promise((resolve) => setTimeout(resolve, NOT_ACTIVE_RETRY_MS));
      }
    }
  }

  /** `turn/interrupt`; if the turn has not ended within the timeout, the app-server is restarted. */
  async interruptTurn(input: InterruptInput): Promise<void> {
    if (this.restarting) await this.restarting;
    const runtime = this.assertOpen();
    const turn = this.activeTurn(input.turnId);
    turn.interruptRequested = true;
    const codexTurnId = await this.announcedTurnId(turn);
    if (turn.terminated) return;
    if (codexTurnId === null) throw new SwitchyardError("turn_not_active", `Turn "${input.turnId}" never started at Codex.`, { turnId: input.turnId });
    try {
      await this.whileStarting(turn, () =>
        runtime.connection.request("turn/interrupt", { threadId: this.threadId as string, turnId: codexTurnId }, this.deps.options.requestTimeoutMs),
      );
    } catch (error) {
      // "no active turn to interrupt": Codex ended it meanwhile; its turn/completed settles it.
      if (turn.terminated) return;
      if (!(error instanceof AppServerRequestError)) throw error;
      this.logger.debug("turn/interrupt refused", { error: error.message });
    }
    this.cancelPending(turn.hostTurnId, "cancelled");
    if (turn.terminated) return;
    const grace = input.hard === true ? Math.min(3_000, this.deps.options.interruptTimeoutMs) : this.deps.options.interruptTimeoutMs;
    turn.interruptTimer = setTimeout(() => {
      if (!turn.terminated && !this.closed) void this.respawn(turn, `the interrupted turn did not end within ${grace} ms`);
    }, grace);
    turn.interruptTimer.unref();
  }

  // ---------------------------------------------------------------------------------------
  // Threads

  /** The Codex turn id of a host turn: this session's map, else the user message's client id. */
  private async codexTurnIdOf(hostTurnId: string, runtime: Runtime): Promise<string> {
    for (const turn of this.turnsByCodexId.values()) if (turn.hostTurnId === hostTurnId && turn.codexTurnId !== null) return turn.codexTurnId;
    let cursor: string | null = null;
    do {
      const page: v2.ThreadTurnsListResponse = await runtime.connection.request(
        "thread/turns/list",
        { threadId: this.threadId as string, itemsView: "full", limit: 50, ...(cursor !== null ? { cursor } : {}) },
        this.deps.options.requestTimeoutMs,
      );
      for (const turn of page.data) {
        if (turn.items.some((item) => item.type === "userMessage" && item.clientId === hostTurnId)) return turn.id;
      }
      cursor = page.nextCursor;
    } while (cursor !== null);
    throw new SwitchyardError("not_found", `Turn "${hostTurnId}" is not part of Codex thread "${this.threadId}".`, { turnId: hostTurnId });
  }

  /** `thread/fork` (through `lastTurnId`, inclusive, when forking after a turn). */
  async forkThread(input: ForkInput): Promise<{ readonly resumeCursor: string }> {
    if (this.restarting) await this.restarting;
    const runtime = this.assertOpen();
    const lastTurnId = input.afterTurnId !== undefined ? await this.codexTurnIdOf(input.afterTurnId, runtime) : undefined;
    const mode = appServerModeSettings(this.input.runtimeMode);
    const forked = await runtime.connection.request(
      "thread/fork",
      {
        threadId: this.threadId as string,
        ...(lastTurnId !== undefined ? { lastTurnId } : {}),
        cwd: this.input.cwd,
        approvalPolicy: mode.approvalPolicy,
        sandbox: mode.sandbox,
        excludeTurns: true,
        // Unloads the copy as soon as it is unsubscribed: Codex lets one process write a thread,
        // and the copy is resumed by another session's app-server.
        config: { thread_unload_delay_secs: 0 },
      },
      this.deps.options.requestTimeoutMs,
    );
    // The copy is resumed by its own session (and process); this one lets go of it and waits
    // (briefly) until Codex has unloaded it, so the next writer can take it.
    const forkId = forked.thread.id;
    const unloaded = new Promise<void>((resolve) => {
      this.closingThreads.set(forkId, resolve);
      setTimeout(resolve, 2_000).unref();
    });
    const unsubscribed = await runtime.connection
      .request("thread/unsubscribe", { threadId: forkId }, this.deps.options.requestTimeoutMs)
      .catch(() => null);
    if (unsubscribed?.status === "unsubscribed") await unloaded;
    this.closingThreads.delete(forkId);
    return { resumeCursor: forkId };
  }

  /** The conversation as Codex recorded it (`thread/turns/list`, oldest first). */
  async readSnapshot(): Promise<ThreadSnapshot> {
    const runtime = this.assertOpen();
    const turns: SnapshotTurn[] = [];
    let cursor: string | null = null;
    do {
      const page: v2.ThreadTurnsListResponse = await runtime.connection.request(
        "thread/turns/list",
        { threadId: this.threadId as string, itemsView: "full", sortDirection: "asc", limit: 50, ...(cursor !== null ? { cursor } : {}) },
        this.deps.options.requestTimeoutMs,
      );
      for (const turn of page.data) {
        const userText = turn.items.filter((item) => item.type === "userMessage").map((item) => userMessageText(item)).join("\n");
        const assistantText = turn.items.filter((item) => item.type === "agentMessage").map((item) => item.text).join("\n");
        turns.push({ providerTurnId: turn.id, userText, assistantText });
      }
      cursor = page.nextCursor;
    } while (cursor !== null);
    return { turns };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.deps.onClosed?.();
    if (this.restarting) await this.restarting.catch(() => undefined);
    for (const entry of [...this.pending.values()]) entry.settle({ kind: "cancelled" });
    if (this.turn?.interruptTimer) clearTimeout(this.turn.interruptTimer);
    const runtime = this.runtime;
    this.runtime = null;
    if (runtime !== null) await this.stopProcess(runtime);
  }

  // ---------------------------------------------------------------------------------------
  // Notifications (synchronous, in arrival order)

  private onNotification(notification: ServerNotification): void {
    const params = notification.params as { threadId?: unknown };
    const threadId = typeof params.threadId === "string" ? params.threadId : null;
    if (threadId !== null && threadId !== this.threadId) {
      if (notification.method === "thread/closed") this.closingThreads.get(threadId)?.();
      this.onChildNotification(threadId, notification);
      return;
    }
    switch (notification.method) {
      case "turn/started": {
        // Codex answers turn/start first, then announces the turn; both bind it, whichever this
        // handler sees first (the answer's continuation runs after the lines that came with it).
        const current = this.turn;
        const codexTurnId = notification.params.turn.id;
        if (current !== null && current.codexTurnId === null && !current.terminated && !this.turnsByCodexId.has(codexTurnId)) {
          this.bindTurn(current, codexTurnId);
        }
        this.turnsByCodexId.get(codexTurnId)?.markAnnounced();
        return;
      }
      case "item/started":
        this.onItemStarted(notification.params.turnId, notification.params.item);
        return;
      case "item/completed":
        this.onItemCompleted(notification.params.turnId, notification.params.item);
        return;
      case "item/agentMessage/delta": {
        const turn = this.turnFor(notification.params.turnId);
        if (turn === null || turn.terminated || notification.params.delta.length === 0) return;
        const { itemId, delta } = notification.params;
        turn.messages.set(itemId, (turn.messages.get(itemId) ?? "") + delta);
        this.emit({ type: "message.delta", turnId: turn.hostTurnId, itemId, text: delta });
        return;
      }
      case "item/reasoning/summaryTextDelta":
      case "item/reasoning/textDelta": {
        const turn = this.turnFor(notification.params.turnId);
        if (turn === null || turn.terminated || notification.params.delta.length === 0) return;
        const { itemId, delta } = notification.params;
        turn.reasoning.set(itemId, (turn.reasoning.get(itemId) ?? "") + delta);
        this.emit({ type: "reasoning.delta", turnId: turn.hostTurnId, itemId, text: delta });
        return;
      }
      case "thread/tokenUsage/updated": {
        const turn = this.turnFor(notification.params.turnId);
        if (turn === null) return;
        const last = notification.params.tokenUsage.last;
        turn.usage = { inputTokens: last.inputTokens, outputTokens: last.outputTokens };
        return;
      }
      case "error": {
        const turn = this.turnFor(notification.params.turnId);
        const { error, willRetry } = notification.params;
        const code = codexErrorCode(error.codexErrorInfo);
        if (willRetry) {
          this.emit({ type: "warning", ...(turn !== null ? { turnId: turn.hostTurnId } : {}), message: `Codex retries after an error: ${error.message}` });
        } else if (turn !== null) {
          turn.lastError = { ...(code !== undefined ? { code } : {}), message: error.message };
        }
        return;
      }
      case "turn/completed": {
        const completed = notification.params.turn;
        const turn = this.turnFor(completed.id);
        if (turn === null || turn.terminated) return;
        this.onTurnCompleted(turn, completed);
        return;
      }
      case "serverRequest/resolved": {
        const rpcId = notification.params.requestId;
        for (const entry of [...this.pending.values()]) {
          if (entry.rpcId === rpcId && entry.settle({ kind: "cancelled" })) this.emitResolved(entry, "cancelled");
        }
        return;
      }
      case "mcpServer/startupStatus/updated": {
        const { name, status, error } = notification.params;
        if (status === "failed") this.warnOnce(`MCP server "${name}" failed to start${error ? `: ${error}` : ""}.`);
        return;
      }
      case "warning":
        this.warnOnce(notification.params.message);
        return;
      case "configWarning":
        this.warnOnce(notification.params.summary);
        return;
      default:
        return;
    }
  }

  private onTurnCompleted(turn: TurnState, completed: v2.Turn): void {
    switch (completed.status) {
      case "completed":
        this.finishTurn(turn, "completed");
        return;
      case "interrupted":
        // Interrupted without our asking: an approval answered `cancel`, or Codex stopped it.
        this.finishTurn(turn, turn.interruptRequested ? "interrupted" : "cancelled");
        return;
      case "failed": {
        const code = completed.error !== null ? codexErrorCode(completed.error.codexErrorInfo) : undefined;
        const error: ProviderTurnError =
          completed.error !== null
            ? { ...(code !== undefined ? { code } : {}), message: completed.error.message }
            : (turn.lastError ?? { message: "Codex reported the turn as failed without an error." });
        this.finishTurn(turn, "failed", error);
        return;
      }
      default:
        this.emit({ type: "warning", turnId: turn.hostTurnId, message: `Codex ended a turn with status "${completed.status}"; treated as failed.` });
        this.finishTurn(turn, "failed", { message: `unexpected turn status ${completed.status}` });
    }
  }

  private onItemStarted(codexTurnId: string, item: v2.ThreadItem): void {
    const turn = this.turnFor(codexTurnId);
    if (turn === null || turn.terminated) return;
    if (item.type === "agentMessage") {
      if (!turn.messages.has(item.id)) turn.messages.set(item.id, item.text);
      return;
    }
    if (item.type === "fileChange") turn.fileChanges.set(item.id, item);
    this.startTool(turn, item);
  }

  private startTool(turn: TurnState, item: v2.ThreadItem): void {
    if (turn.tools.has(item.id)) return;
    const start = toolCallStart(item, this.input.mcp);
    if (start === null) return;
    turn.tools.set(item.id, { done: false });
    this.emit({
      type: "tool_call.started",
      turnId: turn.hostTurnId,
      itemId: item.id,
      kind: start.kind,
      name: start.name,
      title: start.title,
      ...(start.server !== undefined ? { server: start.server } : {}),
      ...(start.input !== undefined ? { input: start.input } : {}),
    });
  }

  private onItemCompleted(codexTurnId: string, item: v2.ThreadItem): void {
    const turn = this.turnFor(codexTurnId);
    if (turn === null || turn.terminated) return;
    switch (item.type) {
      case "agentMessage": {
        const streamed = turn.messages.get(item.id) ?? "";
        turn.messages.delete(item.id);
        if (item.text.length > 0 || streamed.length > 0) this.emit({ type: "message.completed", turnId: turn.hostTurnId, itemId: item.id, text: item.text });
        return;
      }
      case "reasoning": {
        const streamed = turn.reasoning.get(item.id);
        turn.reasoning.delete(item.id);
        const text = reasoningText(item) || streamed || "";
        if (text.length > 0) this.emit({ type: "reasoning.completed", turnId: turn.hostTurnId, itemId: item.id, text });
        return;
      }
      case "userMessage":
        return;
      case "subAgentActivity": {
        const status = item.kind === "completed" ? "completed" : item.kind === "interrupted" ? "failed" : "running";
        this.emit({ type: "subagent.observed", turnId: turn.hostTurnId, nativeId: item.agentThreadId, title: item.agentPath, status, nativeThreadId: item.agentThreadId });
        return;
      }
      default:
        break;
    }
    if (item.type === "fileChange") turn.fileChanges.set(item.id, item);
    this.startTool(turn, item);
    const state = turn.tools.get(item.id);
    const end = toolCallEnd(item);
    if (state === undefined || state.done || end === null) return;
    state.done = true;
    const status = end.status === "failed" && turn.declined.has(item.id) ? "declined" : end.status;
    this.emit({ type: "tool_call.completed", turnId: turn.hostTurnId, itemId: item.id, status, ...(end.output !== undefined ? { output: end.output } : {}) });
    if (item.type === "collabAgentToolCall" && item.tool === "spawnAgent") {
      for (const childThreadId of item.receiverThreadIds) {
        if (this.children.has(childThreadId)) continue;
        this.children.set(childThreadId, { hostTurnId: turn.hostTurnId, title: item.prompt, lastText: null, finished: false });
        this.emit({
          type: "subagent.observed",
          turnId: turn.hostTurnId,
          nativeId: childThreadId,
          ...(item.prompt !== null ? { title: item.prompt } : {}),
          status: "running",
          nativeThreadId: childThreadId,
        });
      }
    }
  }

  /** Notifications of a Codex sub-agent's thread: only its outcome is reported. */
  private onChildNotification(threadId: string, notification: ServerNotification): void {
    const child = this.children.get(threadId);
    if (child === undefined || child.finished) return;
    if (notification.method === "item/completed" && notification.params.item.type === "agentMessage") {
      child.lastText = notification.params.item.text;
      return;
    }
    if (notification.method === "turn/completed") {
      const turn = notification.params.turn;
      const status = turn.status === "completed" ? "completed" : "failed";
      const summary = turn.error?.message ?? child.lastText;
      this.emit({
        type: "subagent.observed",
        turnId: child.hostTurnId,
        nativeId: threadId,
        ...(child.title !== null ? { title: child.title } : {}),
        status,
        ...(summary !== null && summary !== undefined ? { summary } : {}),
        nativeThreadId: threadId,
      });
    }
  }

  // ---------------------------------------------------------------------------------------
  // Server requests (approvals)

  private async onServerRequest(request: ServerRequest): Promise<unknown> {
    switch (request.method) {
      case "item/commandExecution/requestApproval":
      case "item/fileChange/requestApproval":
      case "item/permissions/requestApproval":
        return this.onApproval(request.method, request.params, request.id, request.params.threadId, request.params.turnId);
      case "mcpServer/elicitation/request": {
        const params = request.params;
        if (isToolCallApproval(params) || params.mode === "url") return this.onApproval(request.method, params, request.id, params.threadId, params.turnId);
        this.warnOnce(`Declined a form elicitation from MCP server "${params.serverName}": this driver does not take structured questions.`);
        return { action: "cancel", content: null, _meta: null } satisfies v2.McpServerElicitationRequestResponse;
      }
      case "item/tool/requestUserInput":
        this.warnOnce("Codex asked a structured question (request_user_input); this driver does not take them, so it got no answers.");
        return { answers: {} } satisfies v2.ToolRequestUserInputResponse;
      case "item/tool/call":
        return { contentItems: [{ type: "inputText", text: "Switchyard registers no dynamic tools." }], success: false } satisfies v2.DynamicToolCallResponse;
      default:
        throw new Error(`Switchyard does not handle ${request.method}.`);
    }
  }

  /** The host turn a request belongs to: this thread's turn, or the turn that spawned a sub-agent. */
  private turnForRequest(threadId: string, codexTurnId: string | null): TurnState | null {
    if (threadId === this.threadId) {
      const turn = this.turnFor(codexTurnId);
      return turn !== null && !turn.terminated ? turn : null;
    }
    const child = this.children.get(threadId);
    if (child === undefined) return null;
    const current = this.turn;
    return current !== null && !current.terminated ? current : null;
  }

  private async onApproval<M extends ApprovalMethod>(
    method: M,
    params: ServerRequestParams<M>,
    rpcId: string | number,
    threadId: string,
    codexTurnId: string | null,
  ): Promise<unknown> {
    const turn = this.turnForRequest(threadId, codexTurnId);
    if (turn === null) {
      this.logger.warn("An approval request outside a running turn was cancelled", { method });
      return approvalResponseOf(method, params, "cancel");
    }
    const mode = appServerModeSettings(turn.runtimeMode);
    if (mode.autoAcceptAll || (mode.autoAcceptFileChanges && method === "item/fileChange/requestApproval")) {
      return approvalResponseOf(method, params, "accept");
    }
    const itemId = (params as { itemId?: unknown }).itemId;
    const fileChange = typeof itemId === "string" ? turn.fileChanges.get(itemId) : undefined;
    const approval = approvalRequestOf(method, params, fileChange !== undefined ? { fileChange } : {});
    const outcome = await this.openRuntimeRequest(turn, approval, rpcId);
    if (outcome.kind === "cancelled" || outcome.response.kind !== "approval") return approvalResponseOf(method, params, "cancel");
    const decision = outcome.response.decision;
    if (decision === "decline" && typeof itemId === "string") turn.declined.add(itemId);
    return approvalResponseOf(method, params, decision);
  }

  private openRuntimeRequest(turn: TurnState, request: ApprovalRequest, rpcId: string | number): Promise<RuntimeOutcome> {
    if (this.closed || this.exited || turn.terminated) return Promise.resolve({ kind: "cancelled" });
    const requestId = `${turn.hostTurnId}:codex-request:${++this.requestCounter}`;
    return new Promise<RuntimeOutcome>((resolve) => {
      let settled = false;
      const entry: PendingRuntimeRequest = {
        requestId,
        hostTurnId: turn.hostTurnId,
        kind: request.kind,
        rpcId,
        settle: (outcome) => {
          if (settled) return false;
          settled = true;
          this.pending.delete(requestId);
          resolve(outcome);
          return true;
        },
      };
      this.pending.set(requestId, entry);
      this.emit({ type: "runtime_request.opened", turnId: turn.hostTurnId, requestId, request });
    });
  }

  private emitResolved(entry: PendingRuntimeRequest, resolution: "answered" | "cancelled" | "expired"): void {
    this.emit({ type: "runtime_request.resolved", turnId: entry.hostTurnId, requestId: entry.requestId, resolution });
  }

  /** Settles pending requests (of one turn, or all) without an answer. */
  private cancelPending(hostTurnId: string | null, resolution: "cancelled" | "expired"): void {
    for (const entry of [...this.pending.values()]) {
      if (hostTurnId !== null && entry.hostTurnId !== hostTurnId) continue;
      if (entry.settle({ kind: "cancelled" })) this.emitResolved(entry, resolution);
    }
  }

  /** Answers an approval this session opened. */
  async respondToRuntimeRequest(requestId: string, response: RuntimeRequestResponse): Promise<void> {
    const entry = this.pending.get(requestId);
    if (entry === undefined) {
      throw new SwitchyardError("not_found", `No pending runtime request "${requestId}" in this session; it may have been answered or cancelled.`, { requestId });
    }
    if (response.kind === "user_input") {
      throw new SwitchyardError("invalid_input", `Runtime request "${requestId}" is an approval; answer it with a decision.`, { requestId, kind: response.kind });
    }
    if (entry.settle({ kind: "answered", response })) this.emitResolved(entry, response.kind === "dismiss" ? "cancelled" : "answered");
  }

  // ---------------------------------------------------------------------------------------

  private warnOnce(message: string): void {
    if (this.warned.has(message)) return;
    this.warned.add(message);
    this.emit({ type: "warning", message });
  }

  private emit(event: AdapterEvent): void {
    if (this.closed) return;
    try {
      this.input.emit(event);
    } catch (error) {
      this.logger.error("The host's event sink threw", { type: event.type, error: error instanceof Error ? error.message : String(error) });
    }
  }
}
