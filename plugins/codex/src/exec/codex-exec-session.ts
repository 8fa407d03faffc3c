import { homedir } from "node:os";
import { join } from "node:path";
import type { Codex, ThreadEvent, ThreadOptions } from "@openai/codex-sdk";
import { codexExecUsageOf, codexModelUsage } from "../shared/codex-usage.js";
import { ExecThreadTotals, type ExecTokenCounts } from "./codex-exec-totals.js";
import {
  EventSink,
  StderrTail,
  SwitchyardError,
  type InterruptInput,
  type OpenSessionInput,
  type PluginContext,
  type PluginLogger,
  type ProviderInstanceDescriptor,
  type StartableSession,
  type TurnInput,
} from "@switchyard/sdk";
import type { CodexBinary } from "../shared/codex-binary.js";
import { codexEnvironment } from "../shared/codex-environment.js";
import { codexMcpServers } from "../shared/codex-mcp-config.js";
import type { CodexExecOptions } from "../shared/codex-options.js";
import { execModeSettings } from "../shared/codex-runtime-modes.js";
import { execChangesOf } from "./codex-exec-events.js";
import { CodexExecTurn } from "./codex-exec-turn.js";
import type { CodexSdk } from "./codex-sdk.js";

/** What an exec session needs from its adapter. */
export interface CodexExecSessionDeps {
  readonly instance: ProviderInstanceDescriptor;
  readonly options: CodexExecOptions;
  readonly context: PluginContext;
  readonly binary: CodexBinary;
  /** The Codex SDK, imported from wherever the user installed it (`loadCodexSdk`). */
  readonly sdk: CodexSdk;
  readonly onClosed?: () => void;
}

/** How long a turn may take to end after its process was signalled. */
const ABORT_GRACE_MS = 10_000;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * One Switchyard thread on `@openai/codex-sdk`: each turn runs its own `codex exec` process
 * (`codex exec resume <thread id>` after the first), so nothing lives between turns but the
 * Codex thread id. Interrupting aborts the turn's process. It has no steering, no approval round
 * trip, no native fork and no snapshot, so it has none of those methods: the host's shared
 * policy steers by interrupt-and-restart and forks with portable context.
 */
export class CodexExecSession implements StartableSession {
  readonly #logger: PluginLogger;
  readonly #sink: EventSink;
  readonly #codex: Codex;
  #threadId: string | null;
  #turn: CodexExecTurn | null = null;
  readonly #totals: ExecThreadTotals;
  readonly #warned = new Set<string>();
  #closed = false;

  constructor(
    private readonly deps: CodexExecSessionDeps,
    private readonly input: OpenSessionInput,
  ) {
    this.#logger = deps.context.logger.child({
      driver: "codex-exec",
      instanceId: deps.instance.id,
      providerSessionId: input.providerSessionId,
    });
    this.#sink = new EventSink(input.emit, this.#logger);
    this.#threadId = input.resumeCursor;
    // The SDK's env REPLACES the process environment: codexEnvironment builds all of it (PATH,
    // HOME, CODEX_HOME, the instance's variables) plus the MCP token, which only the env carries.
    // `config` becomes `--config key=value` argv entries: they name the token's env var, never the token.
    const mcpServers = input.mcp !== null ? codexMcpServers(input.mcp) : {};
    const env = codexEnvironment({ instance: deps.instance, binary: deps.binary, grant: input.mcp, session: input });
    this.#totals = new ExecThreadTotals(env.CODEX_HOME ?? join(homedir(), ".codex"), input.resumeCursor);
    this.#codex = new deps.sdk.Codex({
      codexPathOverride: deps.binary.command,
      env,
      config: {
        ...(deps.options.config as Record<string, never>),
        ...(Object.keys(mcpServers).length > 0
          ? { mcp_servers: JSON.parse(JSON.stringify(mcpServers)) as Record<string, never> }
          : {}),
      },
    });
    this.#logger.debug("codex exec session", {
      mcpServers: Object.keys(mcpServers),
      resume: input.resumeCursor !== null,
    });
  }

  /** The Codex thread id (known after the first turn started). */
  get resumeCursor(): string | null {
    return this.#threadId;
  }

  /** Nothing to start: each turn runs its own process. */
  async start(): Promise<void> {}

  async startTurn(input: TurnInput): Promise<{ readonly providerTurnId?: string }> {
    if (this.#closed)
      throw new SwitchyardError("session_closed", "The session is closed.", {
        providerSessionId: this.input.providerSessionId,
      });
    const previous = this.#turn;
    if (previous !== null && !previous.terminated && previous.interruptRequested) {
      // Interrupt-and-restart: the replacement starts once the aborted process has ended.
      await Promise.race([previous.ledger.ended, delay(ABORT_GRACE_MS)]);
    }
    if (this.#turn !== null && !this.#turn.terminated) {
      throw new SwitchyardError(
        "conflict",
        `Turn "${this.#turn.hostTurnId}" is still running; codex exec runs one turn at a time.`,
        {
          runningTurnId: this.#turn.hostTurnId,
          turnId: input.turnId,
        },
      );
    }
    const mode = execModeSettings(input.runtimeMode);
    if (mode.applied !== input.runtimeMode) {
      this.#sink.emit({
        type: "warning",
        turnId: input.turnId,
        message: `codex exec cannot ask for approval, so runtime mode "${input.runtimeMode}" runs as "${mode.applied}" (read-only sandbox).`,
      });
    }
    const model = input.model ?? this.input.model;
    const threadOptions: ThreadOptions = {
      workingDirectory: this.input.cwd,
      skipGitRepoCheck: this.deps.options.skipGitRepoCheck,
      sandboxMode: mode.sandboxMode,
      approvalPolicy: mode.approvalPolicy,
      ...(model !== null ? { model } : {}),
      // codex exec's model_reasoning_effort; the host checked the value against the model's catalog entry.
      ...(input.effort != null
        ? { modelReasoningEffort: input.effort as NonNullable<ThreadOptions["modelReasoningEffort"]> }
        : {}),
    };
    await this.#totals.beforeTurn(this.#threadId);
    const thread =
      this.#threadId !== null
        ? this.#codex.resumeThread(this.#threadId, threadOptions)
        : this.#codex.startThread(threadOptions);
    const turn = new CodexExecTurn(input.turnId, this.#sink.emit);
    this.#turn = turn;
    // codex exec has no instruction channel: the host already folded any instructions into the text.
    const { events } = await thread.runStreamed(input.text, { signal: turn.abort.signal });
    void this.#consume(turn, events, model);
    return {};
  }

  async #consume(turn: CodexExecTurn, events: AsyncGenerator<ThreadEvent>, model: string | null): Promise<void> {
    const context = {
      hostTurnId: turn.hostTurnId,
      grant: this.input.mcp,
      messageText: (itemId: string) => turn.messageText(itemId),
    };
    let counted = false;
    try {
      for await (const event of events) {
        for (const change of execChangesOf(event, context)) {
          if (change.type === "thread") this.#onThread(change.threadId);
          else if (change.type === "notice") this.#warnOnce(turn, change.message);
          else if (change.type === "thread_total") counted = this.#count(turn, change.total, model);
          else turn.apply(change);
        }
      }
      turn.finishRun();
    } catch (error) {
      turn.failRun(() => this.#sdkFailure(error));
    } finally {
      if (!counted) this.#totals.turnEndedUncounted();
    }
  }

  /** The turn's usage: what the thread's total grew by (unknown when the total before is). */
  #count(turn: CodexExecTurn, total: ExecTokenCounts, model: string | null): true {
    const counts = this.#totals.turnEnded(total);
    if (counts !== null) turn.apply({ type: "usage", usage: codexModelUsage(codexExecUsageOf(counts), model) });
    return true;
  }

  #onThread(threadId: string): void {
    if (threadId === this.#threadId) return;
    this.#threadId = threadId;
    this.#sink.emit({ type: "session.resume_cursor", cursor: threadId });
  }

  /** Non-fatal errors Codex repeats every turn (unknown model metadata) are said once a session. */
  #warnOnce(turn: CodexExecTurn, message: string): void {
    if (this.#warned.has(message)) return;
    this.#warned.add(message);
    this.#sink.emit({ type: "warning", turnId: turn.hostTurnId, message });
  }

  /**
   * The SDK's error ("Codex Exec exited with code 1: <all of stderr>") cut to the stderr tail
   * the host's process helpers would keep, with secrets (the MCP token among them) scrubbed.
   */
  #sdkFailure(error: unknown): string {
    const tail = new StderrTail(
      codexEnvironment({
        instance: this.deps.instance,
        binary: this.deps.binary,
        grant: this.input.mcp,
        session: this.input,
      }),
    );
    tail.push(error instanceof Error ? error.message : String(error));
    return tail.text();
  }

  /** Aborts the turn's `codex exec` process (the SDK's AbortSignal). */
  async interruptTurn(input: InterruptInput): Promise<void> {
    const turn = this.#turn;
    if (turn === null || turn.terminated || turn.hostTurnId !== input.turnId) {
      throw new SwitchyardError("turn_not_active", `Turn "${input.turnId}" is not running.`, { turnId: input.turnId });
    }
    turn.interruptRequested = true;
    turn.abort.abort(input.reason ?? "interrupted");
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#sink.close();
    this.deps.onClosed?.();
    const turn = this.#turn;
    if (turn !== null && !turn.terminated) {
      turn.interruptRequested = true;
      turn.abort.abort("session closed");
      await Promise.race([turn.ledger.ended, delay(ABORT_GRACE_MS)]);
    }
  }
}
