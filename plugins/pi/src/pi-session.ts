import { existsSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import {
  withStderrTail,
  SwitchyardError,
  UnsupportedCapabilityError,
  type AdapterEvent,
  type ForkInput,
  type InterruptInput,
  type McpEndpointGrant,
  type OpenSessionInput,
  type PluginContext,
  type PluginLogger,
  type ProviderInstanceDescriptor,
  type ProviderSession,
  type RuntimeMode,
  type RuntimeRequestResponse,
  type SnapshotTurn,
  type SteerInput,
  type ThreadSnapshot,
  type TurnInput,
} from "@switchyard/sdk";
import { approvalAnswer, approvalRequestOf, dismissDialog, parseApprovalDialog } from "./pi-approvals.js";
import type { ExtensionSessionState } from "./pi-extension/switchyard-extension.js";
import { EXTENSION_ENV } from "./pi-extension/switchyard-extension.js";
import { mcpEnvironment, piAgentDir, piArgs, piEnvironment, threadSessionDir, type PiBinary } from "./pi-launch.js";
import type { PiOptions } from "./pi-options.js";
import { PiRpcClient } from "./pi-rpc-client.js";
import { PiTurn } from "./pi-turn.js";
import {
  PI_DIALOG_METHODS,
  isExtensionUiRequest,
  isResponse,
  messageText,
  type PiExtensionUiRequest,
  type PiMessage,
  type PiRpcEvent,
  type PiRpcInbound,
  type PiSessionState,
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
  onClosed?(): void;
}

/** One running `pi --mode rpc` process. */
interface PiRuntime {
  readonly generation: number;
  readonly client: PiRpcClient;
  /** The `--model` it was started with (null: the session's or Pi's default). */
  readonly model: string | null;
  /** Set when the adapter itself stops the process (no `session.exited` for that). */
  retiring: boolean;
}

/** An approval dialog waiting for the host. */
interface PendingApproval {
  readonly requestId: string;
  readonly uiRequestId: string;
  readonly turn: PiTurn;
  readonly toolCallId: string;
  readonly generation: number;
}

/**
 * One Switchyard provider session over `pi --mode rpc`. The conversation lives in Pi's session
 * file (the resume cursor); the process is replaceable: it is restarted on the same file to
 * switch models and after an interrupt Pi did not honour, and reopened from the file by a new
 * session after the host closed this one.
 */
export class PiProviderSession implements ProviderSession {
  private readonly logger: PluginLogger;
  private runtime: PiRuntime | null = null;
  private starting: Promise<PiRuntime> | null = null;
  private generation = 0;
  private turn: PiTurn | null = null;
  private readonly approvals = new Map<string, PendingApproval>();
  private approvalCounter = 0;
  /** The session file Pi writes to (known once Pi answered `get_state`). */
  private sessionFile: string | null;
  /** The last session file seen on disk: what resumes this conversation. */
  private cursor: string | null;
  private model: string | null;
  private runtimeMode: RuntimeMode;
  /** The session's MCP grant; a rotation replaces it (the state file carries the new token). */
  private grant: McpEndpointGrant | null;
  private readonly sessionDir: string;
  private readonly stateDir: string;
  private readonly stateFile: string;
  private stateWrites: Promise<void> = Promise.resolve();
  private closed = false;
  private exited = false;

  constructor(
    private readonly deps: PiSessionDeps,
    private readonly input: OpenSessionInput,
  ) {
    this.logger = deps.context.logger.child({ driver: "pi", instanceId: deps.instance.id, providerSessionId: input.providerSessionId });
    this.model = input.model;
    this.runtimeMode = input.runtimeMode;
    this.grant = input.mcp;
    this.cursor = input.resumeCursor;
    this.sessionFile = input.resumeCursor;
    const agentDir = piAgentDir(piEnvironment(deps.instance, {}));
    // A resumed conversation keeps its directory, so a later clone lands next to it.
    this.sessionDir = input.resumeCursor !== null ? path.dirname(input.resumeCursor) : threadSessionDir(agentDir, input.threadId);
    const safeId = input.providerSessionId.replace(/[^A-Za-z0-9._-]/g, "_");
    this.stateDir = path.join(deps.context.paths.cacheDir, "pi-sessions", safeId);
    this.stateFile = path.join(this.stateDir, "state.json");
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
    if (this.input.resumeCursor !== null && !existsSync(this.input.resumeCursor)) {
      throw new SwitchyardError("not_found", `The Pi session file "${this.input.resumeCursor}" no longer exists, so this conversation cannot be reopened.`, {
        resumeCursor: this.input.resumeCursor,
      });
    }
    if (this.input.interactionMode !== "default") {
      this.emit({ type: "warning", message: `Pi has no "${this.input.interactionMode}" interaction mode; the session runs in its default mode.` });
    }
    await mkdir(this.stateDir, { recursive: true });
    await this.writeState();
    await this.ensureRuntime();
  }

  // ---------------------------------------------------------------------------------------
  // The Pi process

  private writeState(): Promise<void> {
    const write = async () => {
      // A rotated token rides here (the process environment cannot change); never the first one.
      const rotated = this.grant !== null && this.grant !== this.input.mcp ? { mcpToken: this.grant.token } : {};
      const state: ExtensionSessionState = { runtimeMode: this.runtimeMode, ...rotated };
      // Private, and replaced whole, so the extension never reads half a file.
      const temp = `${this.stateFile}.tmp`;
      await writeFile(temp, JSON.stringify(state), { mode: 0o600 });
      await rename(temp, this.stateFile);
    };
    // One write at a time (a rotation may come while a turn switches modes), each with the
    // state as it is when its turn comes.
    const next = this.stateWrites.then(write, write);
    this.stateWrites = next.catch(() => undefined);
    return next;
  }

  private ensureRuntime(): Promise<PiRuntime> {
    if (this.runtime !== null) return Promise.resolve(this.runtime);
    this.starting ??= this.spawn().finally(() => {
      this.starting = null;
    });
    return this.starting;
  }

  private async spawn(): Promise<PiRuntime> {
    const { binary, options, context, instance } = this.deps;
    // Reopen the conversation from its file when there is one; before the first answer Pi has
    // written nothing, and a fresh process starts a fresh file.
    const resumeFrom = this.sessionFile !== null && existsSync(this.sessionFile) ? this.sessionFile : null;
    const args = piArgs({ binary, options, sessionDir: this.sessionDir, sessionFile: resumeFrom, model: this.model, extensionPath: this.deps.extensionPath });
    const env = piEnvironment(instance, { ...mcpEnvironment(this.grant), [EXTENSION_ENV.stateFile]: this.stateFile });
    const generation = ++this.generation;
    const managed = context.process.spawn(binary.command, args, { cwd: this.input.cwd, env, extendEnv: false, stdin: "pipe", label: "pi rpc" });
    const client = new PiRpcClient(managed, this.logger, (message) => this.onMessage(generation, message));
    const runtime: PiRuntime = { generation, client, model: this.model, retiring: false };
    void client.exited.then((exit) => this.onExit(runtime, exit));
    this.logger.info("pi started", { pid: managed.pid, resumed: resumeFrom !== null, mcp: this.grant !== null, model: this.model });
    let state: PiSessionState;
    try {
      // Pi prints nothing when ready; its first answer is the signal.
      state = await client.call<PiSessionState>({ type: "get_state" }, options.startupTimeoutMs);
    } catch (error) {
      runtime.retiring = true;
      await client.stop(500);
      const message = withStderrTail(`pi did not start: ${(error as Error).message}`, client.stderr());
      this.logger.warn("pi failed to start", { message });
      throw new SwitchyardError("provider_unavailable", message, { pid: managed.pid });
    }
    if (this.closed) {
      runtime.retiring = true;
      await client.stop();
      throw new SwitchyardError("session_closed", "The session was closed while pi was starting.");
    }
    this.sessionFile = state.sessionFile ?? null;
    this.runtime = runtime;
    return runtime;
  }

  /** Stops the current process on purpose (model switch, interrupt timeout, close). */
  private async retire(reason: string): Promise<void> {
    const runtime = this.runtime;
    if (runtime === null) return;
    this.runtime = null;
    runtime.retiring = true;
    this.logger.info("pi stopped", { pid: runtime.client.pid, reason });
    for (const approval of [...this.approvals.values()]) if (approval.generation === runtime.generation) this.settleApproval(approval, "cancelled", null);
    await runtime.client.stop();
  }

  private onExit(runtime: PiRuntime, exit: { exitCode: number | null; signal: string | null }): void {
    // A process that never became ready is `spawn`'s to report; a retired one ended on purpose.
    if (runtime.retiring || this.closed || this.exited || this.runtime !== runtime) return;
    this.exited = true;
    this.runtime = null;
    const reason = withStderrTail(`The pi process exited (code ${exit.exitCode ?? "none"}, signal ${exit.signal ?? "none"}).`, runtime.client.stderr());
    this.logger.warn("pi exited", { exitCode: exit.exitCode, signal: exit.signal, reason });
    for (const approval of [...this.approvals.values()]) this.settleApproval(approval, "cancelled", null);
    if (this.turn !== null && !this.turn.terminated) this.endTurn(this.turn, "failed", { code: "pi_exited", message: reason });
    this.emit({ type: "session.exited", reason, ...(exit.exitCode === 0 ? {} : { error: { code: String(exit.exitCode ?? exit.signal ?? "pi_exited"), message: reason } }) });
    void runtime.client.kill();
  }

  // ---------------------------------------------------------------------------------------
  // Messages from Pi (dispatched synchronously, in order)

  private onMessage(generation: number, message: PiRpcInbound): void {
    if (generation !== this.generation || this.closed) return;
    if (isExtensionUiRequest(message)) {
      this.onUiRequest(message, generation);
      return;
    }
    if (isResponse(message)) return;
    this.onEvent(message);
  }

  private onEvent(event: PiRpcEvent): void {
    // Pi writes its session file with the first message: publish the cursor as soon as it
    // exists, so a turn cut short by a host crash can be resumed, not only a finished one.
    if (this.cursor === null) this.refreshCursor();
    const turn = this.turn;
    if (turn === null || turn.terminated) {
      if (event.type === "extension_error") this.logger.warn("pi extension error", { event: event.event, error: event.error });
      return;
    }
    switch (event.type) {
      case "auto_retry_start":
        turn.recovering = true;
        this.emit({
          type: "warning",
          turnId: turn.turnId,
          message: `Pi retries after a provider error (attempt ${event.attempt ?? "?"} of ${event.maxAttempts ?? "?"}): ${event.errorMessage ?? "unknown error"}`,
        });
        return;
      case "auto_retry_end":
        if (event.success === false) this.endTurn(turn, turn.interruptRequested ? "interrupted" : "failed", { message: event.finalError ?? turn.pendingError?.message ?? "Pi's retries failed." });
        return;
      case "compaction_start":
        if (turn.pendingError !== null) turn.recovering = true;
        return;
      case "compaction_end":
        if (turn.pendingError !== null && event.willRetry !== true) this.endTurn(turn, "failed", turn.pendingError);
        return;
      case "extension_error":
        this.emit({ type: "warning", turnId: turn.turnId, message: `A Pi extension failed in ${event.event ?? "a hook"}: ${event.error ?? "unknown error"}` });
        return;
      default:
        break;
    }
    const outcome = turn.apply(event);
    if (outcome === null) return;
    if (outcome.kind === "terminal") {
      if (outcome.warning !== undefined) this.emit({ type: "warning", turnId: turn.turnId, message: outcome.warning });
      this.endTurn(turn, outcome.status, outcome.error);
      return;
    }
    // A provider error: Pi's auto-retry (or overflow compaction) announces itself in the same
    // tick as `agent_end`. A `get_state` round trip orders after it; if nothing was announced
    // by then, the error is final.
    turn.pendingError = outcome.error;
    turn.recovering = false;
    const runtime = this.runtime;
    if (runtime === null) return;
    void runtime.client
      .request({ type: "get_state" }, this.deps.options.requestTimeoutMs)
      .catch(() => null)
      .then(() => {
        if (!turn.terminated && turn.pendingError !== null && !turn.recovering) this.endTurn(turn, "failed", turn.pendingError);
      });
  }

  private onUiRequest(request: PiExtensionUiRequest, generation: number): void {
    const runtime = this.runtime;
    if (!PI_DIALOG_METHODS.includes(request.method)) {
      if (request.method === "notify" && typeof request.message === "string") {
        const turn = this.turn && !this.turn.terminated ? this.turn : null;
        this.emit({ type: "warning", ...(turn ? { turnId: turn.turnId } : {}), message: `Pi: ${request.message}` });
      }
      return;
    }
    const prompt = parseApprovalDialog(request);
    const turn = this.turn;
    if (prompt === null || turn === null || turn.terminated || runtime === null) {
      if (prompt === null) {
        this.emit({
          type: "warning",
          ...(turn && !turn.terminated ? { turnId: turn.turnId } : {}),
          message: `A Pi extension asked "${request.title ?? request.method}" through a ${request.method} dialog, which Switchyard does not show; it was dismissed.`,
        });
      }
      this.answerDialog(runtime, dismissDialog(request.id));
      return;
    }
    const requestId = `approval-${++this.approvalCounter}`;
    this.approvals.set(requestId, { requestId, uiRequestId: request.id, turn, toolCallId: prompt.toolCallId, generation });
    this.emit({ type: "runtime_request.opened", turnId: turn.turnId, requestId, request: approvalRequestOf(prompt) });
  }

  private answerDialog(runtime: PiRuntime | null, answer: Parameters<PiRpcClient["write"]>[0]): void {
    try {
      runtime?.client.write(answer);
    } catch (error) {
      this.logger.debug("answering a pi dialog failed", { error: (error as Error).message });
    }
  }

  /** Answers (or cancels) an approval dialog and reports how it ended. */
  private settleApproval(approval: PendingApproval, resolution: "answered" | "cancelled", decision: RuntimeRequestResponse | null): void {
    if (!this.approvals.delete(approval.requestId)) return;
    const runtime = this.runtime !== null && this.runtime.generation === approval.generation ? this.runtime : null;
    const chosen = decision?.kind === "approval" ? decision.decision : null;
    if (chosen === "decline") approval.turn.markDeclined(approval.toolCallId);
    this.answerDialog(runtime, approvalAnswer(approval.uiRequestId, chosen));
    if (!approval.turn.terminated) this.emit({ type: "runtime_request.resolved", turnId: approval.turn.turnId, requestId: approval.requestId, resolution });
  }

  /** Ends a turn once: open approvals are cancelled, the cursor is refreshed. */
  private endTurn(turn: PiTurn, status: Parameters<PiTurn["finish"]>[0], error?: Parameters<PiTurn["finish"]>[1]): void {
    if (turn.terminated) return;
    for (const approval of [...this.approvals.values()]) if (approval.turn === turn) this.settleApproval(approval, "cancelled", null);
    if (status === "completed" && turn.steeringQueue.length > 0) {
      this.emit({
        type: "warning",
        turnId: turn.turnId,
        message: `${turn.steeringQueue.length} steering message(s) reached Pi after its last model call; Pi delivers them with the next prompt.`,
      });
    }
    turn.finish(status, error);
    if (this.turn === turn) this.turn = null;
    this.refreshCursor();
  }

  private refreshCursor(): void {
    const file = this.sessionFile;
    if (file === null || file === this.cursor || !existsSync(file)) return;
    this.cursor = file;
    this.emit({ type: "session.resume_cursor", cursor: file });
  }

  // ---------------------------------------------------------------------------------------
  // Turns

  private assertOpen(): void {
    if (this.closed) throw new SwitchyardError("session_closed", "The session is closed.", { providerSessionId: this.input.providerSessionId });
    if (this.exited) {
      throw new SwitchyardError("session_closed", "The pi process is gone; open a new session (it resumes from the session file).", {
        providerSessionId: this.input.providerSessionId,
      });
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
      throw new SwitchyardError("conflict", `Turn "${this.turn.turnId}" is still running; steer it or wait for it to end.`, {
        runningTurnId: this.turn.turnId,
        turnId: input.turnId,
      });
    }
    if (input.interactionMode !== "default") {
      this.emit({ type: "warning", turnId: input.turnId, message: `Pi has no "${input.interactionMode}" interaction mode; the turn runs in its default mode.` });
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
    const runtime = await this.ensureRuntime();
    this.assertOpen();

    // Pi has no per-turn instruction channel: the host already folded any instructions into the text.
    const message = input.text;
    const turn = new PiTurn(input.turnId, message, (event) => this.emit(event));
    this.turn = turn;
    const response = await runtime.client.request({ type: "prompt", message }, null).catch((error: Error) => error);
    if (response instanceof Error || !response.success) {
      if (this.turn === turn) this.turn = null;
      const reason = response instanceof Error ? response.message : response.error;
      throw new SwitchyardError("provider_error", `pi refused the prompt: ${reason}`, { turnId: input.turnId });
    }
    // Usually done already: `agent_start` follows the response in the same read.
    turn.markStarted();
    // An abort sent before Pi accepted the prompt found nothing to stop: send it again.
    if (turn.interruptRequested && !turn.terminated) void runtime.client.request({ type: "abort" }, null).catch(() => undefined);
    return {};
  }

  /** Pi's `steer`: the text lands after the current tool calls, before the next model call. */
  async steerTurn(input: SteerInput): Promise<void> {
    this.assertOpen();
    this.activeTurn(input.turnId);
    const runtime = this.runtime;
    if (runtime === null) throw new SwitchyardError("turn_not_active", `Turn "${input.turnId}" has no running pi process.`, { turnId: input.turnId });
    await runtime.client.call({ type: "steer", message: input.text }, this.deps.options.requestTimeoutMs);
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
    for (const approval of [...this.approvals.values()]) if (approval.turn === turn) this.settleApproval(approval, "cancelled", null);
    const runtime = this.runtime;
    if (runtime === null) {
      this.endTurn(turn, "interrupted");
      return;
    }
    // Pi answers `abort` only once the run is over; the turn's end arrives as events.
    void runtime.client.request({ type: "abort" }, null).catch(() => undefined);
    const grace = input.hard === true ? Math.min(2_000, this.deps.options.interruptGraceMs) : this.deps.options.interruptGraceMs;
    if (turn.interruptTimer) clearTimeout(turn.interruptTimer);
    turn.interruptTimer = setTimeout(() => {
      if (turn.terminated || this.closed) return;
      this.emit({ type: "warning", turnId: turn.turnId, message: `pi did not end the run within ${grace} ms of abort; its process was stopped.` });
      this.endTurn(turn, "interrupted");
      void this.retire("interrupt timeout");
    }, grace);
    turn.interruptTimer.unref();
  }

  /**
   * Pi's `clone`: a new session file with the current branch. Pi then works in the copy, so the
   * adapter switches back to the original at once and hands the copy out as the fork's cursor.
   */
  async forkThread(input: ForkInput): Promise<{ readonly resumeCursor: string }> {
    if (input.afterTurnId !== undefined) throw new UnsupportedCapabilityError("threads.forkFromTurn", "pi");
    this.assertOpen();
    if (this.turn !== null && !this.turn.terminated) {
      throw new SwitchyardError("conflict", `Turn "${this.turn.turnId}" is running; fork after it ends.`, { runningTurnId: this.turn.turnId });
    }
    const runtime = await this.ensureRuntime();
    const original = this.sessionFile;
    if (original === null || !existsSync(original)) {
      throw new SwitchyardError("conflict", "This Pi conversation has no saved turn yet, so there is nothing to fork.");
    }
    const timeout = this.deps.options.requestTimeoutMs;
    await runtime.client.call({ type: "clone" }, timeout);
    const copy = await runtime.client.call<PiSessionState>({ type: "get_state" }, timeout);
    await runtime.client.call({ type: "switch_session", sessionPath: original }, timeout);
    const back = await runtime.client.call<PiSessionState>({ type: "get_state" }, timeout);
    if (back.sessionFile !== original) {
      throw new SwitchyardError("internal", `pi did not switch back to "${original}" after cloning (it is on "${back.sessionFile ?? "no file"}").`);
    }
    if (copy.sessionFile === undefined || copy.sessionFile === original || !existsSync(copy.sessionFile)) {
      throw new SwitchyardError("provider_error", "pi's clone produced no new session file.");
    }
    return { resumeCursor: copy.sessionFile };
  }

  /** The conversation as Pi holds it (`get_messages`): one entry per user message. */
  async readSnapshot(): Promise<ThreadSnapshot> {
    this.assertOpen();
    const runtime = await this.ensureRuntime();
    const data = await runtime.client.call<{ messages?: PiMessage[] }>({ type: "get_messages" }, this.deps.options.requestTimeoutMs);
    const turns: { userText: string; assistantText: string }[] = [];
    for (const message of data.messages ?? []) {
      if (message.role === "user") turns.push({ userText: messageText(message), assistantText: "" });
      else if (message.role === "assistant") {
        const text = messageText(message);
        const current = turns.at(-1);
        if (current !== undefined && text !== "") current.assistantText = text;
      }
    }
    return { turns: turns.map((turn): SnapshotTurn => ({ ...turn })) };
  }

  /** Answers an approval the extension asked for. */
  async respondToRuntimeRequest(requestId: string, response: RuntimeRequestResponse): Promise<void> {
    // Pi raises no questions, so no request of this session can take answers.
    if (response.kind === "user_input") throw new UnsupportedCapabilityError("runtimeRequests.userInputQuestions", "pi");
    const approval = this.approvals.get(requestId);
    if (approval === undefined) {
      throw new SwitchyardError("not_found", `No pending runtime request "${requestId}" in this session; it may have been answered or cancelled.`, { requestId });
    }
    this.settleApproval(approval, response.kind === "dismiss" ? "cancelled" : "answered", response);
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
    this.deps.onClosed?.();
    if (this.turn?.interruptTimer) clearTimeout(this.turn.interruptTimer);
    const starting = this.starting;
    if (starting) await starting.catch(() => undefined);
    this.approvals.clear();
    const runtime = this.runtime;
    this.runtime = null;
    if (runtime !== null) {
      runtime.retiring = true;
      await runtime.client.stop();
    }
    await rm(this.stateDir, { recursive: true, force: true }).catch(() => undefined);
  }

  private emit(event: AdapterEvent): void {
    if (this.closed) return;
    try {
      this.input.emit(event);
    } catch (error) {
      this.logger.error("the host's event sink threw", { type: event.type, error: (error as Error).message });
    }
  }
}
