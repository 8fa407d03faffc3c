import { createHash } from "node:crypto";
import { join } from "node:path";
import {
  EventSink,
  SwitchyardError,
  type InterruptInput,
  type OpenSessionInput,
  type PluginContext,
  type PluginLogger,
  type ProviderInstanceDescriptor,
  type StartableSession,
  type SteerInput,
  type TurnInput,
} from "@switchyard/sdk";
import { terminalOf } from "./cursor-events.js";
import { CursorTurn } from "./cursor-turn.js";
import { cursorMcpServers, redactedMcpServers } from "./cursor-mcp-config.js";
import { resolveCursorNode } from "./cursor-node.js";
import type { CursorOptions } from "./cursor-options.js";
import { locateCursorSdk } from "./cursor-sdk-location.js";
import { CursorSidecar } from "./cursor-sidecar-process.js";
import type { McpServerConfig, RunEndedNotification, RunMessageNotification } from "./cursor-wire.js";

/** What a session needs from its adapter. */
export interface CursorSessionDeps {
  readonly instance: ProviderInstanceDescriptor;
  readonly options: CursorOptions;
  readonly context: PluginContext;
  /** The complete sidecar environment (host, instance, `CURSOR_DATA_DIR`, the Cursor API key). */
  readonly env: Readonly<Record<string, string>>;
  /** The folder holding one agent store per thread. */
  readonly storeRoot: string;
}

/** The only runtime mode a Cursor session can honour: the SDK approves every tool itself. */
const HONOURED_RUNTIME_MODE = "full-access";

/** The folder of a thread's agent store: readable, and unique even where names are cut. */
export function threadStoreDir(storeRoot: string, threadId: string): string {
  const readable = threadId.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 60);
  const hash = createHash("sha256").update(threadId).digest("hex").slice(0, 12);
  return join(storeRoot, `${readable}-${hash}`);
}

/**
 * One Switchyard provider session over the Cursor SDK: one sidecar process on Node ≥ 22.13 with
 * one local agent (`Agent.create`, or `Agent.resume` of the cursor, the agent id, from the
 * thread's agent store). Each host turn is one Cursor run (`send`); the run's stream becomes the
 * turn's events; steering is `run.steer`, interrupting `run.cancel`.
 */
export class CursorProviderSession implements StartableSession {
  readonly #logger: PluginLogger;
  readonly #sink: EventSink;
  readonly #mcpServers: Record<string, McpServerConfig> | null;
  #sidecar: CursorSidecar | null = null;
  #turn: CursorTurn | null = null;
  #cursor: string | null;
  /** The model runs use unless a turn names another (the sidecar settled it at open). */
  #model: string | null;
  #closed = false;
  #exited = false;

  constructor(
    private readonly deps: CursorSessionDeps,
    private readonly input: OpenSessionInput,
    private readonly onClosed: () => void,
  ) {
    this.#logger = deps.context.logger.child({
      driver: "cursor",
      instanceId: deps.instance.id,
      providerSessionId: input.providerSessionId,
    });
    this.#sink = new EventSink(input.emit, this.#logger);
    this.#cursor = input.resumeCursor;
    this.#model = input.model;
    this.#mcpServers = cursorMcpServers(input.mcp);
  }

  /** The Cursor agent id, once known. */
  get resumeCursor(): string | null {
    return this.#cursor;
  }

  /** The sidecar's pid (diagnostics and tests). */
  get processId(): number | null {
    return this.#sidecar?.pid ?? null;
  }

  /** Starts the sidecar and opens the agent (resuming the cursor's, when given). */
  async start(): Promise<void> {
    if (this.input.interactionMode !== "default") {
      this.#sink.emit({
        type: "warning",
        message: `The cursor driver offers no "${this.input.interactionMode}" interaction mode; the session runs in its default mode.`,
      });
    }
    const node = await resolveCursorNode(this.deps.context.process, this.deps.options.nodePath, this.deps.env);
    if (!node.ok)
      throw new SwitchyardError("provider_unavailable", node.reason, { nodePath: this.deps.options.nodePath ?? null });
    const located = locateCursorSdk({ sdkPath: this.deps.options.sdkPath, nodePath: node.node.path });
    if (!located.ok)
      throw new SwitchyardError("provider_unavailable", located.reason, { sdkPath: this.deps.options.sdkPath ?? null });
    if (located.warning !== null) this.#sink.emit({ type: "warning", message: located.warning });
    const sidecar = CursorSidecar.start({
      helpers: this.deps.context.process,
      node: node.node.path,
      cwd: this.input.cwd,
      env: this.deps.env,
      logger: this.#logger,
      label: "cursor sidecar",
      listener: {
        onRunMessage: (notification) => this.#onRunMessage(notification),
        onRunEnded: (notification) => this.#onRunEnded(notification),
      },
    });
    this.#sidecar = sidecar;
    sidecar.channel.onClosed((error) => this.#onSidecarGone(error.message));
    const timeout = this.deps.options.startupTimeoutMs;
    let sdkVersion: string;
    try {
      sdkVersion = (await sidecar.initialize({ sdkDir: located.sdk.dir }, timeout)).sdkVersion;
    } catch (error) {
      throw new SwitchyardError(
        "provider_unavailable",
        sidecar.describe(
          `The Cursor SDK did not load in its sidecar (${node.node.path}, ${node.node.version}): ${(error as Error).message}`,
        ),
        { pid: sidecar.pid },
      );
    }
    const resume = this.input.resumeCursor;
    let opened;
    try {
      opened = await sidecar.openAgent(
        {
          cwd: this.input.cwd,
          storeDir: threadStoreDir(this.deps.storeRoot, this.input.threadId),
          model: this.input.model ?? this.deps.options.defaultModel ?? null,
          resume,
          mcpServers: this.#mcpServers,
        },
        timeout,
      );
    } catch (error) {
      const shape = error as SwitchyardError;
      if (resume !== null && shape.code === "not_found") {
        throw new SwitchyardError(
          "not_found",
          `The Cursor agent "${resume}" is not in this thread's agent store (${threadStoreDir(this.deps.storeRoot, this.input.threadId)}), so its conversation cannot be reopened.`,
          { resumeCursor: resume },
        );
      }
      throw new SwitchyardError(shape.code ?? "provider_error", sidecar.describe(shape.message), {
        ...(shape.details ?? {}),
        resumeCursor: resume,
      });
    }
    if (this.#closed)
      throw new SwitchyardError("session_closed", "The session was closed while the Cursor agent was opening.");
    this.#model = opened.model;
    if (opened.agentId !== this.#cursor) {
      this.#cursor = opened.agentId;
      this.#sink.emit({ type: "session.resume_cursor", cursor: opened.agentId });
    }
    // Only redacted metadata: the server entry carries the session's token.
    this.#logger.info("cursor sidecar started", {
      pid: sidecar.pid,
      node: node.node.version,
      sdk: sdkVersion,
      sdkDir: located.sdk.dir,
      resumed: resume !== null,
      model: opened.model,
      mcpServers: redactedMcpServers(this.#mcpServers),
    });
  }

  // ---------------------------------------------------------------------------------------
  // What the sidecar reports

  #turnFor(turnId: string): CursorTurn | null {
    const turn = this.#turn;
    return turn !== null && !turn.terminated && turn.turnId === turnId ? turn : null;
  }

  #onRunMessage(notification: RunMessageNotification): void {
    if (this.#closed) return;
    this.#turnFor(notification.turnId)?.onMessage(notification.message);
  }

  #onRunEnded(notification: RunEndedNotification): void {
    if (this.#closed) return;
    const turn = this.#turnFor(notification.turnId);
    if (turn === null) return;
    const ending = terminalOf(notification, turn.interruptRequested);
    const error =
      ending.error !== undefined && this.#sidecar !== null
        ? { ...ending.error, message: this.#sidecar.describe(ending.error.message) }
        : ending.error;
    this.#endTurn(turn, ending.status, error);
  }

  #onSidecarGone(reason: string): void {
    if (this.#closed || this.#exited) return;
    this.#exited = true;
    this.#logger.warn("cursor sidecar exited", { reason });
    const turn = this.#turn;
    if (turn !== null && !turn.terminated)
      this.#endTurn(turn, turn.interruptRequested ? "interrupted" : "failed", {
        code: "cursor_sidecar_exited",
        message: reason,
      });
    this.#sink.emit({ type: "session.exited", reason, error: { code: "cursor_sidecar_exited", message: reason } });
  }

  #endTurn(
    turn: CursorTurn,
    status: Parameters<CursorTurn["finish"]>[0],
    error?: Parameters<CursorTurn["finish"]>[1],
  ): void {
    turn.finish(status, error);
    if (this.#turn === turn) this.#turn = null;
  }

  // ---------------------------------------------------------------------------------------
  // Turns

  #assertOpen(): CursorSidecar {
    if (this.#closed)
      throw new SwitchyardError("session_closed", "The session is closed.", {
        providerSessionId: this.input.providerSessionId,
      });
    if (this.#exited || this.#sidecar === null) {
      throw new SwitchyardError(
        "session_closed",
        "The Cursor sidecar is gone; open a new session (it resumes the agent).",
        { providerSessionId: this.input.providerSessionId },
      );
    }
    return this.#sidecar;
  }

  #activeTurn(turnId: string): CursorTurn {
    const turn = this.#turnFor(turnId);
    if (turn === null) throw new SwitchyardError("turn_not_active", `Turn "${turnId}" is not running.`, { turnId });
    return turn;
  }

  /**
   * One Cursor run. The agent takes one run at a time (`send` during an active run throws
   * `AgentBusyError`), so a turn never starts while another runs: the host queues.
   */
  async startTurn(input: TurnInput): Promise<{ readonly providerTurnId?: string }> {
    let sidecar = this.#assertOpen();
    // After an interrupt the host may start the next turn before the run ended; the interrupt
    // grace timer bounds this wait.
    if (this.#turn !== null && !this.#turn.terminated && this.#turn.interruptRequested) await this.#turn.ledger.ended;
    sidecar = this.#assertOpen();
    if (this.#turn !== null && !this.#turn.terminated) {
      throw new SwitchyardError(
        "conflict",
        `Turn "${this.#turn.turnId}" is still running; steer it or wait for it to end.`,
        {
          runningTurnId: this.#turn.turnId,
          turnId: input.turnId,
        },
      );
    }
    if (input.runtimeMode !== HONOURED_RUNTIME_MODE) {
      throw new SwitchyardError(
        "invalid_input",
        `The cursor driver can only run turns in "${HONOURED_RUNTIME_MODE}": the Cursor SDK approves every command and edit itself and offers no approval callback, so "${input.runtimeMode}" cannot be enforced. Run the thread in "${HONOURED_RUNTIME_MODE}" or use a provider that asks for approvals.`,
        { runtimeMode: input.runtimeMode, offered: [HONOURED_RUNTIME_MODE] },
      );
    }
    if (input.interactionMode !== "default") {
      this.#sink.emit({
        type: "warning",
        turnId: input.turnId,
        message: `The cursor driver offers no "${input.interactionMode}" interaction mode; the turn runs in its default mode.`,
      });
    }
    const turn = new CursorTurn(input.turnId, this.#sink.emit);
    this.#turn = turn;
    let runId: string;
    try {
      // The host folded every instruction into the text already (no instruction channel declared).
      ({ runId } = await sidecar.send({
        turnId: input.turnId,
        text: input.text,
        model: input.model ?? this.#model!,
        mcpServers: this.#mcpServers,
      }));
    } catch (error) {
      if (this.#turn === turn) this.#turn = null;
      throw error;
    }
    // The SDK keeps the model of the last send; so does the session.
    if (input.model !== null) this.#model = input.model;
    turn.runId = runId;
    turn.ledger.start(runId);
    return { providerTurnId: runId };
  }

  /**
   * `run.steer(text)`. Cursor's backend decides: `complete_delivered` means the running turn
   * took the message; `revert_to_followup` means it did not (queued it for the next turn,
   * cancelled or rejected it, or never answered) and the SDK hands the message back. Then this
   * rejects, so the host runs the message as a follow-up turn (the timeline says so), and the
   * turn gets a notice of what Cursor answered.
   */
  async steerTurn(input: SteerInput): Promise<void> {
    const sidecar = this.#assertOpen();
    const turn = this.#activeTurn(input.turnId);
    if (turn.interruptRequested)
      throw new SwitchyardError("turn_not_active", `Turn "${input.turnId}" is being interrupted.`, {
        turnId: input.turnId,
      });
    const { outcome } = await sidecar.steer({ turnId: input.turnId, text: input.text });
    this.#logger.info("cursor steer answered", { turnId: input.turnId, outcome });
    if (outcome === "complete_delivered") return;
    if (!turn.terminated) {
      this.#sink.emit({
        type: "warning",
        turnId: input.turnId,
        message:
          "Cursor's backend did not take the steered message into the running turn (revert_to_followup); it runs as a follow-up turn instead.",
      });
    }
    throw new SwitchyardError(
      "conflict",
      `Cursor's backend answered the steer with ${outcome}: the message was not delivered into turn "${input.turnId}".`,
      {
        turnId: input.turnId,
        outcome,
      },
    );
  }

  /**
   * `run.cancel()`: the SDK closes the run's stream and the run ends cancelled, reported
   * interrupted. If it has not ended after the grace period (short for a hard stop), the turn
   * ends interrupted and the sidecar is stopped; the next turn opens a new session that resumes
   * the agent.
   */
  async interruptTurn(input: InterruptInput): Promise<void> {
    const sidecar = this.#assertOpen();
    const turn = this.#activeTurn(input.turnId);
    turn.interruptRequested = true;
    const grace =
      input.hard === true ? Math.min(2_000, this.deps.options.interruptGraceMs) : this.deps.options.interruptGraceMs;
    if (turn.interruptTimer !== null) clearTimeout(turn.interruptTimer);
    turn.interruptTimer = setTimeout(() => {
      if (turn.terminated || this.#closed) return;
      this.#sink.emit({
        type: "warning",
        turnId: turn.turnId,
        message: `The Cursor run did not end within ${grace} ms of the cancel; its sidecar was stopped.`,
      });
      this.#endTurn(turn, "interrupted");
      void this.#sidecar?.stop();
    }, grace);
    turn.interruptTimer.unref();
    await sidecar
      .cancel(turn.turnId)
      .catch((error: Error) =>
        this.#logger.debug("cursor cancel failed", { turnId: turn.turnId, error: error.message }),
      );
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.onClosed();
    if (this.#turn?.interruptTimer) clearTimeout(this.#turn.interruptTimer);
    this.#sink.close();
    await this.#sidecar?.stop();
  }
}
