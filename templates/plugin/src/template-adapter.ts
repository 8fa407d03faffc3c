import {
  SPECIFICATION_VERSION,
  decodeCapabilities,
  withStderrTail,
  type OpenSessionInput,
  type OrchestrationAdapter,
  type PluginContext,
  type ProviderCapabilities,
  type ProviderSession,
  type ProviderStatus,
  type TurnInput,
  type InterruptInput,
  type ManagedProcess,
} from "@switchyard/sdk";
import { TEMPLATE_CAPABILITIES } from "./template-capabilities.js";
import type { TemplateHarnessCommand } from "./template-wire.js";

/** One conversation: each turn runs the harness once. */
class TemplateSession implements ProviderSession {
  readonly resumeCursor = null;
  private running: { turnId: string; process: ManagedProcess; interrupted: boolean } | null = null;
  private turns = 0;

  constructor(
    private readonly input: OpenSessionInput,
    private readonly harness: TemplateHarnessCommand,
    private readonly context: PluginContext,
    private readonly environment: Readonly<Record<string, string>>,
  ) {}

  async startTurn(turn: TurnInput): Promise<{ providerTurnId?: string }> {
    if (this.running !== null) throw new Error("a turn is already running");
    this.turns += 1;
    const prompt = turn.instructions ? `${turn.instructions}\n\n${turn.text}` : turn.text;
    const child = this.context.process.spawn(this.harness.command, this.harness.args, {
      cwd: this.input.cwd,
      env: this.environment,
      label: `template turn ${this.turns}`,
    });
    const state = { turnId: turn.turnId, process: child, interrupted: false };
    this.running = state;
    this.input.emit({ type: "turn.started", turnId: turn.turnId });
    const itemId = `message-${this.turns}`;
    let text = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      text += chunk;
      this.input.emit({ type: "message.delta", turnId: turn.turnId, itemId, text: chunk });
    });
    child.stdin?.end(prompt);
    void child.exited.then(({ exitCode, signal }) => {
      if (this.running === state) this.running = null;
      if (text.trim() !== "") this.input.emit({ type: "message.completed", turnId: turn.turnId, itemId, text: text.trim() });
      if (state.interrupted) this.input.emit({ type: "turn.terminal", turnId: turn.turnId, status: "interrupted" });
      else if (exitCode === 0) this.input.emit({ type: "turn.terminal", turnId: turn.turnId, status: "completed" });
      else {
        // The host keeps the end of the harness's stderr (secrets scrubbed) for messages like this.
        const message = withStderrTail(`The harness exited with ${signal ?? `code ${String(exitCode)}`}.`, child.stderrTail());
        this.input.emit({ type: "turn.terminal", turnId: turn.turnId, status: "failed", error: { message } });
      }
    });
    return {};
  }

  async interruptTurn(input: InterruptInput): Promise<void> {
    if (this.running === null || this.running.turnId !== input.turnId) return;
    this.running.interrupted = true;
    await this.running.process.kill("SIGTERM", 2_000);
  }

  async close(): Promise<void> {
    if (this.running !== null) {
      this.running.interrupted = true;
      await this.running.process.kill("SIGTERM", 1_000);
    }
  }
}

/** The adapter of one configured instance. */
export class TemplateAdapter implements OrchestrationAdapter {
  readonly specificationVersion = SPECIFICATION_VERSION;
  readonly driverKind = "template";
  private readonly declared: ProviderCapabilities = decodeCapabilities(TEMPLATE_CAPABILITIES).capabilities;

  constructor(
    readonly instanceId: string,
    private readonly harness: TemplateHarnessCommand,
    private readonly context: PluginContext,
    private readonly environment: Readonly<Record<string, string>>,
    private readonly models: readonly string[],
  ) {}

  capabilities(): ProviderCapabilities {
    return this.declared;
  }

  /** Looks only (no process started), so it answers both probe depths the same way. */
  async probe(): Promise<ProviderStatus> {
    const path = await this.context.process.which(this.harness.command);
    if (path === null) {
      return { installed: false, executable: false, authenticated: "unknown", models: [], message: `${this.harness.command} was not found on PATH.` };
    }
    return { installed: true, executable: true, authenticated: "unknown", models: this.models.map((id) => ({ id })) };
  }

  async openSession(input: OpenSessionInput): Promise<ProviderSession> {
    return new TemplateSession(input, this.harness, this.context, this.environment);
  }
}
