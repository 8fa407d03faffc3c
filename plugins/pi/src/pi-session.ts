import { existsSync } from "node:fs";
import path from "node:path";
import {
  EventSink,
  RuntimeRequestBook,
  SwitchyardError,
  UnsupportedCapabilityError,
  type ForkInput,
  type InterruptInput,
  type McpEndpointGrant,
  type OpenSessionInput,
  type PluginContext,
  type PluginLogger,
  type ProviderInstanceDescriptor,
  type ProviderTurnError,
  type RuntimeMode,
  type RuntimeRequestResponse,
  type StartableSession,
  type SteerInput,
  type SteerOutcome,
  type ThreadSnapshot,
  type TurnInput,
  type TurnTerminalStatus,
} from "@switchyard/sdk";
import { routeUiRequest, type PiDialog } from "./pi-dialogs.js";
import { snapshotOf } from "./pi-events.js";
import { clonePiSession } from "./pi-fork.js";
import { piAgentDir, piEnvironment, threadSessionDir, type PiBinary } from "./pi-launch.js";
import type { PiOptions } from "./pi-options.js";
import { dispositionOf } from "./pi-wire.js";
import { launchPi, type PiRuntime } from "./pi-process.js";
import { PiStateFile } from "./pi-state-file.js";
import { sessionFileProblem } from "./pi-session-file.js";
import { PiTurn, type PiTurnStep } from "./pi-turn.js";
import {
  isExtensionUiRequest,
  isResponse,
  type PiExtensionUiRequest,
  type PiExtensionUiResponse,
  type PiMessage,
  type PiRpcEvent,
  type PiRpcInbound,
} from "./pi-wire.js";

/** What a session needs from its adapter. */
export interface PiSessionDeps {
  readonly instance: ProviderInstanceDescriptor;
  readonly options: PiOptions;
  readonly context: PluginContext;
  readonly binary: PiBinary;
  /** The Switchyard extension, written into the plugin's cache directory. */
  readonly extensionPath: string;
  /** Called once when the session closes. */
  onClosed(): void;
}

/**
 * One Switchyard provider session over `pi --mode rpc`. The conversation lives in Pi's session
 * file (the resume cursor); the process is replaceable: it is restarted on the same file to
 * switch models and after an interrupt Pi did not honour, and reopened from the file by a new
 * session after the host closed this one.
 */
export class PiProviderSession implements StartableSession {
  private readonly logger: PluginLogger;
  private readonly sink: EventSink;
  private readonly requests: RuntimeRequestBook<PiDialog>;
  private readonly stateFile: PiStateFile;
  private runtime: PiRuntime | null = null;
  private starting: Promise<PiRuntime> | null = null;
  private generation = 0;
  private turn: PiTurn | null = null;
  /** The session file Pi writes to (known once Pi answered `get_state`). */
  private sessionFile: string | null;
  /** The last session file seen on disk: what resumes this conversation. */
  private cursor: string | null;
  private model: string | null;
  /** The thinking level turns ask for (their effort); null keeps the session's or Pi's default. */
  private thinking: string | null = null;
  private runtimeMode: RuntimeMode;
  /** The session's MCP grant; a rotation replaces it (the state file carries the new token). */
  private grant: McpEndpointGrant | null;
  private readonly sessionDir: string;
  private closed = false;
  private exited = false;

  constructor(
    private readonly deps: PiSessionDeps,
    private readonly input: OpenSessionInput,
  ) {
    this.logger = deps.context.logger.child({
      driver: "pi",
      instanceId: deps.instance.id,
      providerSessionId: input.providerSessionId,
    });
    this.sink = new EventSink(input.emit, this.logger);
    this.requests = new RuntimeRequestBook<PiDialog>(this.sink.emit, "approval");
    this.model = input.model;
    this.runtimeMode = input.runtimeMode;
    this.grant = input.mcp;
    this.cursor = input.resumeCursor;
    this.sessionFile = input.resumeCursor;
    // A profile's harness home is this session's agent directory: its conversations live there.
    const agentDir = piAgentDir(piEnvironment(deps.instance, {}, input));
    // A resumed conversation keeps its directory, so a later clone lands next to it.
    this.sessionDir =
      input.resumeCursor !== null ? path.dirname(input.resumeCursor) : threadSessionDir(agentDir, input.threadId);
    this.stateFile = new PiStateFile(deps.context.paths.cacheDir, input.providerSessionId);
  }

  /** The Pi session file holding this conversation, once it exists on disk. */
  get resumeCursor(): string | null {
    return this.cursor;
  }

  /** The pid of the current Pi process (diagnostics and tests). */
  get processId(): number | null {
    return this.runtime?.client.pid ?? null;
  }

  /** Starts Pi (resuming the cursor's session file, when given) and waits until it answers. */
  async start(): Promise<void> {
    const problem = this.input.resumeCursor !== null ? sessionFileProblem(this.input.resumeCursor) : null;
    if (problem !== null) {
      throw new SwitchyardError(
        "not_found",
        `The Pi session file "${this.input.resumeCursor}" cannot reopen this conversation: ${problem}.`,
        {
          resumeCursor: this.input.resumeCursor,
        },
      );
    }
    if (this.input.interactionMode !== "default") {
      this.sink.emit({
        type: "warning",
        message: `Pi has no "${this.input.interactionMode}" interaction mode; the session runs in its default mode.`,
      });
    }
    await this.writeState();
    await this.ensureRuntime();
  }

  // ---------------------------------------------------------------------------------------
  // The Pi process

  private writeState(): Promise<void> {
    // A rotated token rides here (the process environment cannot change); never the first one.
    return this.stateFile.write(() => ({
      runtimeMode: this.runtimeMode,
      ...(this.grant !== null && this.grant !== this.input.mcp ? { mcpToken: this.grant.token } : {}),
      // The profile's rules, which the extension applies at every tool call.
      ...(this.input.toolRules != null ? { toolRules: this.input.toolRules } : {}),
    }));
  }

  private ensureRuntime(): Promise<PiRuntime> {
    if (this.runtime !== null) return Promise.resolve(this.runtime);
    this.starting ??= this.spawn().finally(() => {
      this.starting = null;
    });
    return this.starting;
  }

  private async spawn(): Promise<PiRuntime> {
    // Reopen the conversation from its file when there is one; before the first answer Pi has
    // written nothing, and a fresh process starts a fresh file.
    const sessionFile = this.sessionFile !== null && existsSync(this.sessionFile) ? this.sessionFile : null;
    const generation = ++this.generation;
    const { runtime, state } = await launchPi({
      ...this.deps,
      logger: this.logger,
      session: this.input,
      cwd: this.input.cwd,
      sessionDir: this.sessionDir,
      sessionFile,
      model: this.model,
      thinking: this.thinking,
      grant: this.grant,
      stateFile: this.stateFile.path,
      generation,
      onMessage: (message) => this.onMessage(generation, message),
    });
    void runtime.client.channel.exited.then((exit) => this.onExit(runtime, exit));
    if (this.closed) {
      runtime.retiring = true;
      await runtime.client.stop();
      throw new SwitchyardError("session_closed", "The session was closed while pi was starting.");
    }
    this.sessionFile = state.sessionFile ?? null;
    this.runtime = runtime;
    return runtime;
  }

  /** Stops the current process on purpose (model switch, interrupt timeout): its dialogs die with it. */
  private async retire(reason: string): Promise<void> {
    const runtime = this.runtime;
    if (runtime === null) return;
    this.runtime = null;
    runtime.retiring = true;
    this.logger.info("pi stopped", { pid: runtime.client.pid, reason });
    for (const open of this.requests.pending())
      if (open.native.generation === runtime.generation) this.requests.cancel(open.requestId);
    await runtime.client.stop();
  }

  private onExit(runtime: PiRuntime, exit: { exitCode: number | null; signal: string | null }): void {
    // A process that never became ready is `spawn`'s to report; a retired one ended on purpose.
    if (runtime.retiring || this.closed || this.exited || this.runtime !== runtime) return;
    this.exited = true;
    this.runtime = null;
    const reason =
      runtime.client.channel.closedError?.message ??
      `pi exited (code ${exit.exitCode ?? "none"}, signal ${exit.signal ?? "none"}).`;
    this.logger.warn("pi exited", { exitCode: exit.exitCode, signal: exit.signal, reason });
    this.requests.cancelTurn(null);
    if (this.turn !== null && !this.turn.terminated)
      this.endTurn(this.turn, "failed", { code: "pi_exited", message: reason });
    this.sink.emit({
      type: "session.exited",
      reason,
      ...(exit.exitCode === 0
        ? {}
        : { error: { code: String(exit.exitCode ?? exit.signal ?? "pi_exited"), message: reason } }),
    });
    void runtime.client.kill();
  }

  // ---------------------------------------------------------------------------------------
  // Messages from Pi (dispatched synchronously, in order)

  private onMessage(generation: number, message: PiRpcInbound): void {
    if (generation !== this.generation || this.closed) return;
    if (isExtensionUiRequest(message)) this.onUiRequest(message, generation);
    else if (!isResponse(message)) this.onEvent(message);
  }

  private onUiRequest(request: PiExtensionUiRequest, generation: number): void {
    const live = this.turn !== null && !this.turn.terminated ? this.turn : null;
    routeUiRequest(request, this.requests, {
      turn: live,
      generation,
      warn: (message) => this.sink.emit({ type: "warning", ...(live ? { turnId: live.turnId } : {}), message }),
      answer: (answer) => this.answerDialog(generation, answer),
    });
  }

  private onEvent(event: PiRpcEvent): void {
    // Pi writes its session file with the first message: publish the cursor as soon as it
    // exists, so a turn cut short by a host crash can be resumed, not only a finished one.
    if (this.cursor === null) this.refreshCursor();
    const turn = this.turn;
    if (turn !== null && !turn.terminated) this.follow(turn, turn.apply(event));
    else if (event.type === "extension_error")
      this.logger.warn("pi extension error", { event: event.event, error: event.error });
  }

  /** Does what the turn asked for after an event. */
  private follow(turn: PiTurn, step: PiTurnStep): void {
    if (step === null) return;
    if (step.kind === "end") {
      this.endTurn(turn, step.status, step.error);
      return;
    }
    // Pi's auto-retry (or overflow compaction) announces itself in the same tick as
    // `agent_end`. A `get_state` round trip orders after it.
    const runtime = this.runtime;
    if (runtime === null) return;
    void runtime.client
      .request({ type: "get_state" }, this.deps.options.requestTimeoutMs)
      .catch(() => null)
      .then(() => this.follow(turn, turn.errorSettled()));
  }

  /** Answers a dialog in the process that asked (a restarted Pi no longer waits for it). */
  private answerDialog(generation: number, answer: PiExtensionUiResponse): void {
    const runtime = this.runtime;
    if (runtime === null || runtime.generation !== generation) return;
    try {
      runtime.client.send(answer);
    } catch (error) {
      this.logger.debug("answering a pi dialog failed", { error: (error as Error).message });
    }
  }

  /** Ends a turn once (its open requests are cancelled by the ledger) and refreshes the cursor. */
  private endTurn(turn: PiTurn, status: TurnTerminalStatus, error?: ProviderTurnError): void {
    if (!turn.finish(status, error)) return;
    if (this.turn === turn) this.turn = null;
    this.refreshCursor();
  }

  private refreshCursor(): void {
    const file = this.sessionFile;
    if (file === null || file === this.cursor || !existsSync(file)) return;
    this.cursor = file;
    this.sink.emit({ type: "session.resume_cursor", cursor: file });
  }

  // ---------------------------------------------------------------------------------------
  // Turns

  private assertOpen(): void {
    if (this.closed)
      throw new SwitchyardError("session_closed", "The session is closed.", {
        providerSessionId: this.input.providerSessionId,
      });
    if (this.exited) {
      throw new SwitchyardError(
        "session_closed",
        "The pi process is gone; open a new session (it resumes from the session file).",
        {
          providerSessionId: this.input.providerSessionId,
        },
      );
    }
  }

  private activeTurn(turnId: string): PiTurn {
    const turn = this.turn;
    if (turn === null || turn.terminated || turn.turnId !== turnId) {
      throw new SwitchyardError("turn_not_active", `Turn "${turnId}" is not running.`, { turnId });
    }
    return turn;
  }

  async startTurn(input: TurnInput): Promise<{ readonly providerTurnId?: string }> {
    this.assertOpen();
    // After an interrupt the host may start the next turn before Pi has ended the last one; the
    // interrupt grace timer bounds this wait.
    if (this.turn !== null && !this.turn.terminated && this.turn.interruptRequested) await this.turn.ended;
    this.assertOpen();
    if (this.turn !== null && !this.turn.terminated) {
      throw new SwitchyardError(
        "conflict",
        `Turn "${this.turn.turnId}" is still running; steer it or wait for it to end.`,
        {
          runningTurnId: this.turn.turnId,
          turnId: input.turnId,
        },
      );
    }
    if (input.interactionMode !== "default") {
      this.sink.emit({
        type: "warning",
        turnId: input.turnId,
        message: `Pi has no "${input.interactionMode}" interaction mode; the turn runs in its default mode.`,
      });
    }
    if (input.runtimeMode !== this.runtimeMode) {
      this.runtimeMode = input.runtimeMode;
      await this.writeState();
    }
    if (input.model !== null && input.model !== this.model) {
      this.model = input.model;
      // Pi's set_model also rewrites the default model in settings.json; a restart on the same
      // session file switches the model without touching the user's configuration.
      if (this.runtime !== null && this.runtime.model !== this.model) await this.retire("model switch");
    }
    if (input.effort != null && input.effort !== this.thinking) {
      this.thinking = input.effort;
      // Like a model switch: a restart on the same session file, with `--thinking`.
      if (this.runtime !== null && this.runtime.thinking !== this.thinking) await this.retire("thinking level switch");
    }
    const runtime = await this.ensureRuntime();
    this.assertOpen();

    // Pi has no per-turn instruction channel: the host already folded any instructions into the text.
    const turn = new PiTurn(input.turnId, this.sink.emit, this.requests);
    this.turn = turn;
    const response = await runtime.client
      .request({ type: "prompt", message: input.text }, null)
      .catch((error: Error) => error);
    if (response instanceof Error || !response.success) {
      if (this.turn === turn) this.turn = null;
      const reason = response instanceof Error ? response.message : response.error;
      throw new SwitchyardError("provider_error", `pi refused the prompt: ${reason}`, { turnId: input.turnId });
    }
    // Usually done already: `agent_start` follows the response in the same read.
    turn.start();
    // Pi 0.99+ says what became of the prompt (older Pi says nothing: it started a run).
    const disposition = dispositionOf(response.data);
    if (disposition === "handled") {
      // An extension command or input handler consumed it: no run starts, so no agent_end comes.
      this.sink.emit({
        type: "warning",
        turnId: input.turnId,
        message:
          "A Pi extension handled this prompt itself (an extension command or input handler): no model run started.",
      });
      this.endTurn(turn, turn.interruptRequested ? "interrupted" : "completed");
      return {};
    }
    if (disposition === "queued") {
      this.sink.emit({
        type: "warning",
        turnId: input.turnId,
        message:
          "Pi queued this prompt into a run it was already doing (started by an extension); the turn ends with that run.",
      });
    }
    // An abort sent before Pi accepted the prompt found nothing to stop: send it again.
    if (turn.interruptRequested && !turn.terminated)
      void runtime.client.request({ type: "abort" }, null).catch(() => undefined);
    return {};
  }

  /**
   * Pi's `steer`: the text lands after the current tool calls, before the next model call. Pi
   * 0.99+ acknowledges it `queued` (delivered) or `handled` (an input handler consumed it), which
   * the host records on the message.
   */
  async steerTurn(input: SteerInput): Promise<SteerOutcome> {
    this.assertOpen();
    this.activeTurn(input.turnId);
    const runtime = this.runtime;
    if (runtime === null)
      throw new SwitchyardError("turn_not_active", `Turn "${input.turnId}" has no running pi process.`, {
        turnId: input.turnId,
      });
    const data = await runtime.client.call({ type: "steer", message: input.text }, this.deps.options.requestTimeoutMs);
    if (dispositionOf(data) !== "handled") return { disposition: "delivered" };
    this.sink.emit({
      type: "warning",
      turnId: input.turnId,
      message: "A Pi extension's input handler consumed the steered message: it did not reach the model.",
    });
    return { disposition: "handled", detail: "a Pi extension's input handler" };
  }

  /**
   * Pi's `abort`. Pi ends the run with `stopReason: "aborted"`; if it has not after the grace
   * period (short for a hard stop), its process group is killed, the turn ends interrupted, and
   * the next turn starts a new process on the same session file.
   */
  async interruptTurn(input: InterruptInput): Promise<void> {
    this.assertOpen();
    const turn = this.activeTurn(input.turnId);
    turn.interruptRequested = true;
    this.requests.cancelTurn(turn.turnId);
    const runtime = this.runtime;
    if (runtime === null) {
      this.endTurn(turn, "interrupted");
      return;
    }
    // Pi answers `abort` only once the run is over; the turn's end arrives as events.
    void runtime.client.request({ type: "abort" }, null).catch(() => undefined);
    const grace =
      input.hard === true ? Math.min(2_000, this.deps.options.interruptGraceMs) : this.deps.options.interruptGraceMs;
    if (turn.interruptTimer) clearTimeout(turn.interruptTimer);
    turn.interruptTimer = setTimeout(() => {
      if (turn.terminated || this.closed) return;
      this.sink.emit({
        type: "warning",
        turnId: turn.turnId,
        message: `pi did not end the run within ${grace} ms of abort; its process was stopped.`,
      });
      this.endTurn(turn, "interrupted");
      void this.retire("interrupt timeout");
    }, grace);
    turn.interruptTimer.unref();
  }

  /** Pi's `clone` of the idle conversation; the copy's file is the fork's cursor. */
  async forkThread(input: ForkInput): Promise<{ readonly resumeCursor: string }> {
    if (input.afterTurnId !== undefined) throw new UnsupportedCapabilityError("threads.forkFromTurn", "pi");
    this.assertOpen();
    if (this.turn !== null && !this.turn.terminated) {
      throw new SwitchyardError("conflict", `Turn "${this.turn.turnId}" is running; fork after it ends.`, {
        runningTurnId: this.turn.turnId,
      });
    }
    const runtime = await this.ensureRuntime();
    const original = this.sessionFile;
    if (original === null || !existsSync(original)) {
      throw new SwitchyardError("conflict", "This Pi conversation has no saved turn yet, so there is nothing to fork.");
    }
    return { resumeCursor: await clonePiSession(runtime.client, original, this.deps.options.requestTimeoutMs) };
  }

  /** The conversation as Pi holds it (`get_messages`): one entry per user message. */
  async readSnapshot(): Promise<ThreadSnapshot> {
    this.assertOpen();
    const runtime = await this.ensureRuntime();
    const data = await runtime.client.call<{ messages?: PiMessage[] }>(
      { type: "get_messages" },
      this.deps.options.requestTimeoutMs,
    );
    return snapshotOf(data.messages ?? []);
  }

  /** Answers an approval the extension asked for; a dismissal cancels it (the tool is blocked). */
  async respondToRuntimeRequest(requestId: string, response: RuntimeRequestResponse): Promise<void> {
    // Pi raises no questions, so no request of this session can take answers.
    if (response.kind === "user_input")
      throw new UnsupportedCapabilityError("runtimeRequests.userInputQuestions", "pi");
    this.requests.respond(requestId, response);
  }

  /**
   * Takes a rotated credential, also during a turn: the extension reads the state file at every
   * Switchyard call, and a restarted Pi process gets the new token in its environment.
   */
  async updateMcpGrant(grant: McpEndpointGrant): Promise<void> {
    this.assertOpen();
    this.grant = grant;
    await this.writeState();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.sink.close();
    this.deps.onClosed();
    if (this.turn?.interruptTimer) clearTimeout(this.turn.interruptTimer);
    const starting = this.starting;
    if (starting) await starting.catch(() => undefined);
    const runtime = this.runtime;
    this.runtime = null;
    // Nothing is reported any more; this only settles what still waits on an answer.
    this.requests.cancelTurn(null, "expired");
    if (runtime !== null) {
      runtime.retiring = true;
      await runtime.client.stop();
    }
    await this.stateFile.remove();
  }
}
