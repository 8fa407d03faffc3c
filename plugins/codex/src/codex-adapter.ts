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
import { CODEX_APP_SERVER_CAPABILITIES } from "./codex-capabilities.js";
import { codexEnvironment } from "./codex-environment.js";
import { codexOptionsOf, codexOptionsSchema, type CodexOptions } from "./codex-options.js";
import { probeCodex } from "./codex-probe.js";
import { CodexAppServerSession } from "./codex-session.js";

/** The complete capability record of the `codex` driver. */
export const codexAppServerCapabilities: ProviderCapabilities = mergeCapabilities(NO_CAPABILITIES, CODEX_APP_SERVER_CAPABILITIES).capabilities;

/**
 * The OrchestrationAdapter of one `codex` instance: each session runs its own `codex app-server`
 * (JSON-RPC over stdio) in its own process group, holding one Codex thread.
 */
export class CodexAppServerAdapter implements OrchestrationAdapter {
  readonly specificationVersion = SPECIFICATION_VERSION;
  readonly instanceId: string;
  readonly driverKind = "codex";
  private readonly sessions = new Set<CodexAppServerSession>();

  constructor(
    private readonly instance: ProviderInstanceDescriptor,
    private readonly options: CodexOptions,
    private readonly context: PluginContext,
  ) {
    this.instanceId = instance.id;
  }

  capabilities(): ProviderCapabilities {
    return codexAppServerCapabilities;
  }

  probe(options: ProbeOptions = {}): Promise<ProviderStatus> {
    return probeCodex({ codexPath: this.options.codexPath, instance: this.instance, context: this.context, depth: options.depth ?? "full" });
  }

  async openSession(input: OpenSessionInput): Promise<ProviderSession> {
    const binary = await resolveCodexBinary(this.options.codexPath, this.context, codexEnvironment({ instance: this.instance, binary: null, grant: null }));
    if (binary === null) {
      throw new SwitchyardError("provider_unavailable", "Codex was not found: install @openai/codex, or set codexPath in the instance options.", {
        codexPath: this.options.codexPath ?? null,
      });
    }
    const session: CodexAppServerSession = new CodexAppServerSession(
      { instance: this.instance, options: this.options, context: this.context, binary, onClosed: () => this.sessions.delete(session) },
      input,
    );
    try {
      await session.start();
    } catch (error) {
      await session.close();
      throw error;
    }
    this.sessions.add(session);
    return session;
  }

  async dispose(): Promise<void> {
    await Promise.all([...this.sessions].map((session) => session.close()));
  }
}

/** The `codex` driver: Codex through `codex app-server`. */
export function createCodexDriver(): ProviderDriver<CodexOptions> {
  return defineDriver<CodexOptions>({
    driverKind: "codex",
    displayName: "Codex",
    optionsSchema: codexOptionsSchema,
    capabilities: CODEX_APP_SERVER_CAPABILITIES,
    create: ({ instance, options, context }: CreateInstanceInput<CodexOptions>) => new CodexAppServerAdapter(instance, codexOptionsOf(options ?? {}), context),
  });
}
