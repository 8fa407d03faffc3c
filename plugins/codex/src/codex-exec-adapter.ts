import {
  NO_CAPABILITIES,
  SPECIFICATION_VERSION,
  SwitchyardError,
  defineDriver,
  mergeCapabilities,
  type CreateInstanceInput,
  type OpenSessionInput,
  type OrchestrationAdapter,
  type PluginContext,
  type ProviderCapabilities,
  type ProviderDriver,
  type ProviderInstanceDescriptor,
  type ProviderSession,
  type ProbeOptions,
  type ProviderStatus,
} from "@switchyard/sdk";
import { resolveCodexBinary } from "./codex-binary.js";
import { CODEX_EXEC_CAPABILITIES } from "./codex-capabilities.js";
import { codexEnvironment } from "./codex-environment.js";
import { CodexExecSession } from "./codex-exec-session.js";
import { codexExecOptionsOf, codexExecOptionsSchema, type CodexExecOptions } from "./codex-options.js";
import { probeCodex } from "./codex-probe.js";

/** The complete capability record of the `codex-exec` driver. */
export const codexExecCapabilities: ProviderCapabilities = mergeCapabilities(NO_CAPABILITIES, CODEX_EXEC_CAPABILITIES).capabilities;

/** The OrchestrationAdapter of one `codex-exec` instance: `@openai/codex-sdk`, one `codex exec` per turn. */
export class CodexExecAdapter implements OrchestrationAdapter {
  readonly specificationVersion = SPECIFICATION_VERSION;
  readonly instanceId: string;
  readonly driverKind = "codex-exec";
  private readonly sessions = new Set<CodexExecSession>();

  constructor(
    private readonly instance: ProviderInstanceDescriptor,
    private readonly options: CodexExecOptions,
    private readonly context: PluginContext,
  ) {
    this.instanceId = instance.id;
  }

  capabilities(): ProviderCapabilities {
    return codexExecCapabilities;
  }

  probe(options: ProbeOptions = {}): Promise<ProviderStatus> {
    return probeCodex({ codexPath: this.options.codexPath, instance: this.instance, context: this.context, depth: options.depth ?? "full" });
  }

  /** Opens a session; no process starts until the first turn. */
  async openSession(input: OpenSessionInput): Promise<ProviderSession> {
    const binary = await resolveCodexBinary(this.options.codexPath, this.context, codexEnvironment({ instance: this.instance, binary: null, grant: null }));
    if (binary === null) {
      throw new SwitchyardError("provider_unavailable", "Codex was not found: install @openai/codex, or set codexPath in the instance options.", {
        codexPath: this.options.codexPath ?? null,
      });
    }
    const session: CodexExecSession = new CodexExecSession(
      { instance: this.instance, options: this.options, context: this.context, binary, onClosed: () => this.sessions.delete(session) },
      input,
    );
    this.sessions.add(session);
    return session;
  }

  async dispose(): Promise<void> {
    await Promise.all([...this.sessions].map((session) => session.close()));
  }
}

/** The `codex-exec` driver: Codex through `@openai/codex-sdk` (`codex exec` per turn). */
export function createCodexExecDriver(): ProviderDriver<CodexExecOptions> {
  return defineDriver<CodexExecOptions>({
    driverKind: "codex-exec",
    displayName: "Codex (exec)",
    optionsSchema: codexExecOptionsSchema,
    capabilities: CODEX_EXEC_CAPABILITIES,
    create: ({ instance, options, context }: CreateInstanceInput<CodexExecOptions>) => new CodexExecAdapter(instance, codexExecOptionsOf(options ?? {}), context),
  });
}
