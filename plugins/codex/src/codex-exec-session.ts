import { Codex, type ThreadEvent, type ThreadItem, type ThreadOptions } from "@openai/codex-sdk";
import {
  StderrTail,
  SwitchyardError,
  UnsupportedCapabilityError,
  type AdapterEvent,
  type ForkInput,
  type InterruptInput,
  type OpenSessionInput,
  type PluginContext,
  type PluginLogger,
  type ProviderInstanceDescriptor,
  type ProviderSession,
  type ProviderTurnError,
  type RuntimeRequestResponse,
  type SteerInput,
  type ThreadSnapshot,
  type TurnInput,
  type TurnTerminalStatus,
} from "@switchyard/sdk";
import type { CodexBinary } from "./codex-binary.js";
import { codexEnvironment } from "./codex-environment.js";
import { execToolCallEnd, execToolCallStart } from "./codex-exec-items.js";
import { codexMcpServers } from "./codex-mcp-config.js";
import type { CodexExecOptions } from "./codex-options.js";
import { execModeSettings } from "./codex-runtime-modes.js";

/** What an exec session needs from its adapter. */
export interface CodexExecSessionDeps {
  readonly instance: ProviderInstanceDescriptor;
  readonly options: CodexExecOptions;
  readonly context: PluginContext;
  readonly binary: CodexBinary;
  readonly onClosed?: () => void;
}

interface ExecTurn {
  readonly hostTurnId: string;
  readonly abort: AbortController;
  startedEmitted: boolean;
  terminated: boolean;
  interruptRequested: boolean;
  /** Text of agent messages so far, by item id (to stream only what is new). */
  readonly messages: Map<string, string>;
  readonly tools: Map<string, { done: boolean }>;
  lastError: ProviderTurnError | null;
  readonly ended: Promise<void>;
  markEnded(): void;
}

/** How long a turn may take to end after its process was signalled. */
const ABORT_GRACE_MS = 10_000;

/**
 * One Switchyard thread on `@openai/codex-sdk`: each turn runs its own `codex exec` process
 * (`codex exec resume <thread id>` after the first), so nothing lives between turns but the
 * Codex thread id. Interrupting aborts the turn's process; there is no steering, no approval
 * round trip and no native fork.
 */
export class CodexExecSession implements ProviderSession {
  private readonly logger: PluginLogger;
  private readonly codex: Codex;
  private threadId: string | null;
  private turn: ExecTurn | null = null;
  private readonly warned = new Set<string>();
  private closed = false;

  constructor(
    private readonly deps: CodexExecSessionDeps,
    private readonly input: OpenSessionInput,
  ) {
    this.logger = deps.context.logger.child({ driver: "codex-exec", instanceId: deps.instance.id, providerSessionId: input.providerSessionId });
    this.threadId = input.resumeCursor;
    // The SDK's env REPLACES the process environment: codexEnvironment builds all of it (PATH,
    // HOME, CODEX_HOME, the instance's variables) plus the MCP token, which only the env carries.
    // `config` becomes `--config key=value` argv entries: they name the token's env var, never the token.
    const mcpServers = input.mcp !== null ? codexMcpServers(input.mcp) : {};
    this.codex = new Codex({
      codexPathOverride: deps.binary.command,
      env: codexEnvironment({ instance: deps.instance, binary: deps.binary, grant: input.mcp }),
      config: {
        ...(deps.options.config as Record<string, never>),
        ...(Object.keys(mcpServers).length > 0 ? { mcp_servers: JSON.parse(JSON.stringify(mcpServers)) as Record<string, never> } : {}),
      },
    });
    this.logger.debug("codex exec session", { mcpServers: Object.keys(mcpServers), resume: input.resumeCursor !== null });
  }

  /** The Codex thread id (known after the first turn started). */
  get resumeCursor(): string | null {
    return this.threadId;
  }

  async startTurn(input: TurnInput): Promise<{ readonly providerTurnId?: string }> {
    if (this.closed) throw new SwitchyardError("session_closed", "The session is closed.", { providerSessionId: this.input.providerSessionId });
    const previous = this.turn;
    if (previous !== null && !previous.terminated && previous.interruptRequested) {
      // Interrupt-and-restart: the replacement starts once the aborted process has ended.
      await Promise.race([previous.ended, new Promise((resolve) => setTimeout(resolve, ABORT_GRACE_MS).unref())]);
    }
    if (this.turn !== null && !this.turn.terminated) {
      throw new SwitchyardError("conflict", `Turn "${this.turn.hostTurnId}" is still running; codex exec runs one turn at a time.`, {
        runningTurnId: this.turn.hostTurnId,
        turnId: input.turnId,
      });
    }
    const mode = execModeSettings(input.runtimeMode);
    if (mode.applied !== input.runtimeMode) {
      this.emit({
        type: "warning",
        turnId: input.turnId,
        message: `codex exec cannot ask for approval, so runtime mode "${input.runtimeMode}" runs as "${mode.applied}" (read-only sandbox).`,
      });
    }
    const threadOptions: ThreadOptions = {
      workingDirectory: this.input.cwd,
      skipGitRepoCheck: this.deps.options.skipGitRepoCheck,
      sandboxMode: mode.sandboxMode,
      approvalPolicy: mode.approvalPolicy,
      ...((input.model ?? this.input.model) !== null ? { model: (input.model ?? this.input.model) as string } : {}),
    };
    // codex exec has no instruction channel: the host already folded any instructions into the text.
    const prompt = input.text;
    const thread = this.threadId !== null ? this.codex.resumeThread(this.threadId, threadOptions) : this.codex.startThread(threadOptions);

    let markEnded!: () => void;
    const ended = new Promise<void>((resolve) => {
      markEnded = resolve;
    });
    const turn: ExecTurn = {
      hostTurnId: input.turnId,
      abort: new AbortController(),
      startedEmitted: false,
      terminated: false,
      interruptRequested: false,
      messages: new Map(),
      tools: new Map(),
      lastError: null,
      ended,
      markEnded,
    };
    this.turn = turn;
    const { events } = await thread.runStreamed(prompt, { signal: turn.abort.signal });
    void this.consume(turn, events);
    return {};
  }

  private async consume(turn: ExecTurn, events: AsyncGenerator<ThreadEvent>): Promise<void> {
    let outcome: { status: TurnTerminalStatus; error?: ProviderTurnError; usage?: { inputTokens: number; outputTokens: number } } | null = null;
    try {
      for await (const event of events) {
        const result = this.onEvent(turn, event);
        if (result !== null) outcome = result;
      }
      outcome ??= turn.lastError !== null ? { status: "failed", error: turn.lastError } : { status: "completed" };
    } catch (error) {
      if (turn.interruptRequested) outcome = { status: "interrupted" };
      else outcome = { status: "failed", error: turn.lastError ?? { code: "codex_exec_failed", message: this.sdkFailure(error) } };
    }
    this.finishTurn(turn, outcome.status, outcome.error, outcome.usage);
  }

  /**
   * The SDK's error ("Codex Exec exited with code 1: <all of stderr>") cut to the stderr tail
   * the host's process helpers would keep, with secrets (the MCP token among them) scrubbed.
   */
  private sdkFailure(error: unknown): string {
    const tail = new StderrTail(codexEnvironment({ instance: this.deps.instance, binary: this.deps.binary, grant: this.input.mcp }));
    tail.push(error instanceof Error ? error.message : String(error));
    return tail.text();
  }

  /** Maps one SDK event; returns the turn's outcome when the event ends it. */
  private onEvent(
    turn: ExecTurn,
    event: ThreadEvent,
  ): { status: TurnTerminalStatus; error?: ProviderTurnError; usage?: { inputTokens: number; outputTokens: number } } | null {
    switch (event.type) {
      case "thread.started":
        if (event.thread_id !== this.threadId) {
          this.threadId = event.thread_id;
          this.emit({ type: "session.resume_cursor", cursor: event.thread_id });
        }
        return null;
      case "turn.started":
        this.ensureStarted(turn);
        return null;
      case "item.started":
      case "item.updated":
      case "item.completed":
        // Codex reports some items (a model-metadata warning) before turn.started.
        this.ensureStarted(turn);
        this.onItem(turn, event.item, event.type === "item.completed");
        return null;
      case "turn.completed":
        return { status: "completed", usage: { inputTokens: event.usage.input_tokens, outputTokens: event.usage.output_tokens } };
      case "turn.failed":
        return { status: "failed", error: { code: "turn_failed", message: event.error.message } };
      case "error":
        turn.lastError = { code: "codex_error", message: event.message };
        return null;
      default:
        return null;
    }
  }

  private ensureStarted(turn: ExecTurn): void {
    if (turn.startedEmitted) return;
    turn.startedEmitted = true;
    this.emit({ type: "turn.started", turnId: turn.hostTurnId });
  }

  private onItem(turn: ExecTurn, item: ThreadItem, completed: boolean): void {
    // `codex exec` numbers items per process (item_0, item_1…): scope them to the turn.
    const itemId = `${turn.hostTurnId}:${item.id}`;
    switch (item.type) {
      case "agent_message": {
        const before = turn.messages.get(itemId) ?? "";
        const delta = item.text.startsWith(before) ? item.text.slice(before.length) : item.text;
        turn.messages.set(itemId, item.text);
        if (delta.length > 0) this.emit({ type: "message.delta", turnId: turn.hostTurnId, itemId, text: delta });
        if (completed) this.emit({ type: "message.completed", turnId: turn.hostTurnId, itemId, text: item.text });
        return;
      }
      case "reasoning":
        if (completed && item.text.length > 0) this.emit({ type: "reasoning.completed", turnId: turn.hostTurnId, itemId, text: item.text });
        return;
      case "error":
        // Non-fatal (Codex repeats some, such as unknown model metadata, every turn): once per session.
        if (completed && !this.warned.has(item.message)) {
          this.warned.add(item.message);
          this.emit({ type: "warning", turnId: turn.hostTurnId, message: item.message });
        }
        return;
      case "todo_list":
        return;
      default:
        break;
    }
    let state = turn.tools.get(itemId);
    if (state === undefined) {
      const start = execToolCallStart(item, this.input.mcp);
      if (start === null) return;
      state = { done: false };
      turn.tools.set(itemId, state);
      this.emit({
        type: "tool_call.started",
        turnId: turn.hostTurnId,
        itemId,
        kind: start.kind,
        name: start.name,
        title: start.title,
        ...(start.server !== undefined ? { server: start.server } : {}),
        ...(start.input !== undefined ? { input: start.input } : {}),
      });
    }
    if (!completed || state.done) return;
    const end = execToolCallEnd(item);
    if (end === null) return;
    state.done = true;
    this.emit({ type: "tool_call.completed", turnId: turn.hostTurnId, itemId, status: end.status, ...(end.output !== undefined ? { output: end.output } : {}) });
  }

  private finishTurn(turn: ExecTurn, status: TurnTerminalStatus, error?: ProviderTurnError, usage?: { inputTokens: number; outputTokens: number }): void {
    if (turn.terminated) return;
    turn.terminated = true;
    for (const [itemId, tool] of turn.tools) {
      if (tool.done) continue;
      tool.done = true;
      this.emit({ type: "tool_call.completed", turnId: turn.hostTurnId, itemId, status: status === "completed" ? "completed" : "failed" });
    }
    this.emit({ type: "turn.terminal", turnId: turn.hostTurnId, status, ...(error !== undefined ? { error } : {}), ...(usage !== undefined ? { usage } : {}) });
    if (this.turn === turn) this.turn = null;
    turn.markEnded();
  }

  /** Not supported: the shared policy interrupts and restarts instead. */
  async steerTurn(_input: SteerInput): Promise<void> {
    throw new UnsupportedCapabilityError("turns.activeSteering", "codex-exec", "codex exec cannot take input while a turn runs; the host interrupts and restarts the turn instead.");
  }

  /** Aborts the turn's `codex exec` process (the SDK's AbortSignal). */
  async interruptTurn(input: InterruptInput): Promise<void> {
    const turn = this.turn;
    if (turn === null || turn.terminated || turn.hostTurnId !== input.turnId) {
      throw new SwitchyardError("turn_not_active", `Turn "${input.turnId}" is not running.`, { turnId: input.turnId });
    }
    turn.interruptRequested = true;
    turn.abort.abort(input.reason ?? "interrupted");
  }

  /** Not supported: forks travel as portable context. */
  async forkThread(_input: ForkInput): Promise<{ readonly resumeCursor: string }> {
    throw new UnsupportedCapabilityError("threads.fork", "codex-exec", "codex exec cannot fork a thread; the host forks with portable context instead.");
  }

  /** Not supported: `codex exec` cannot ask for approval. */
  async respondToRuntimeRequest(_requestId: string, _response: RuntimeRequestResponse): Promise<void> {
    throw new UnsupportedCapabilityError("runtimeRequests.approvals", "codex-exec", "codex exec raises no runtime requests.");
  }

  /** Not supported: the exec driver keeps no record of the conversation. */
  async readSnapshot(): Promise<ThreadSnapshot> {
    throw new UnsupportedCapabilityError("threads.readSnapshot", "codex-exec");
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.deps.onClosed?.();
    const turn = this.turn;
    if (turn !== null && !turn.terminated) {
      turn.interruptRequested = true;
      turn.abort.abort("session closed");
      await Promise.race([turn.ended, new Promise((resolve) => setTimeout(resolve, ABORT_GRACE_MS).unref())]);
    }
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
