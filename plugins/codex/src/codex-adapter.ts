import {
  defineAdapter,
  defineDriver,
  harnessNotFoundStatus,
  harnessVersionVerdict,
  type HarnessSearch,
  type CapabilityDeclaration,
  type OpenSessionInput,
  type OptionsSchema,
  type PluginContext,
  type ProviderDriver,
  type ProviderInstanceDescriptor,
  type StartableSession,
} from "@switchyard/sdk";
import { CodexAppServerSession } from "./app-server/codex-session.js";
import { CODEX_APP_SERVER_CAPABILITIES, CODEX_EXEC_CAPABILITIES } from "./codex-capabilities.js";
import { CodexExecSession } from "./exec/codex-exec-session.js";
import { findCodexSdk, loadCodexSdk } from "./exec/codex-sdk.js";
import { requireCodexBinary, type CodexBinary } from "./shared/codex-binary.js";
import { codexEnvironment } from "./shared/codex-environment.js";
import {
  codexExecOptionsOf,
  codexExecOptionsSchema,
  codexOptionsOf,
  codexOptionsSchema,
  type CodexExecOptions,
  type CodexOptions,
} from "./shared/codex-options.js";
import { probeCodex } from "./shared/codex-probe.js";

/** What a driver's session gets from its adapter. */
interface CodexSessionSetup<TOptions> {
  readonly instance: ProviderInstanceDescriptor;
  readonly options: TOptions;
  readonly context: PluginContext;
  readonly binary: CodexBinary;
  readonly onClosed: () => void;
}

/** One Codex driver: what differs between `codex` and `codex-exec`. */
interface CodexDriverSpec<TOptions extends { readonly codexPath?: string | undefined }> {
  readonly driverKind: string;
  readonly displayName: string;
  readonly optionsSchema: OptionsSchema<TOptions>;
  /** Reads options that may not have passed through the schema (a driver created directly). */
  readonly optionsOf: (value: unknown) => TOptions;
  readonly capabilities: CapabilityDeclaration;
  readonly session: (
    setup: CodexSessionSetup<TOptions>,
    input: OpenSessionInput,
  ) => StartableSession | Promise<StartableSession>;
  /** A library the driver runs in-process besides the binary (the Codex SDK), found the same way. */
  readonly library?: (
    context: PluginContext,
    env: Readonly<Record<string, string | undefined>>,
  ) => Promise<HarnessSearch>;
}

/**
 * A Codex driver on the kit's adapter shell. Both drivers probe the same way (the same binary and
 * CODEX_HOME) and find the binary before each session, so a missing one fails the session with
 * `provider_unavailable` and what to do.
 */
function codexDriver<TOptions extends { readonly codexPath?: string | undefined }>(
  spec: CodexDriverSpec<TOptions>,
): ProviderDriver<TOptions> {
  return defineDriver<TOptions>({
    driverKind: spec.driverKind,
    displayName: spec.displayName,
    optionsSchema: spec.optionsSchema,
    capabilities: spec.capabilities,
    create: ({ instance, options: raw, context }) => {
      const options = spec.optionsOf(raw ?? {});
      const { codexPath } = options;
      return defineAdapter({
        instance,
        driverKind: spec.driverKind,
        capabilities: spec.capabilities,
        probe: async (probe = {}) => {
          const env = codexEnvironment({ instance, binary: null, grant: null });
          const library = spec.library === undefined ? null : await spec.library(context, env);
          if (library !== null && library.found === null)
            return harnessNotFoundStatus(
              library,
              instance.customModels.map((id) => ({ id })),
            );
          const status = await probeCodex({ codexPath, instance, context, depth: probe.depth ?? "full" });
          const verdict =
            library === null
              ? null
              : harnessVersionVerdict(
                  library.spec,
                  library.found?.packageVersion,
                  library.found?.packageDir ?? undefined,
                );
          if (verdict?.kind === "untested")
            return { ...status, warnings: [...(status.warnings ?? []), verdict.warning] };
          if (verdict?.kind === "unsupported") return { ...status, executable: false, message: verdict.refusal };
          return status;
        },
        createSession: async (input, onClosed) => {
          const binary = await requireCodexBinary(
            codexPath,
            context,
            codexEnvironment({ instance, binary: null, grant: null }),
          );
          return spec.session({ instance, options, context, binary, onClosed }, input);
        },
      });
    },
  });
}

/**
 * The `codex` driver: each session runs its own `codex app-server` (JSON-RPC over stdio) in its
 * own process group, holding one Codex thread.
 */
export function createCodexDriver(): ProviderDriver<CodexOptions> {
  return codexDriver<CodexOptions>({
    driverKind: "codex",
    displayName: "Codex",
    optionsSchema: codexOptionsSchema,
    optionsOf: codexOptionsOf,
    capabilities: CODEX_APP_SERVER_CAPABILITIES,
    session: (setup, input) => new CodexAppServerSession(setup, input),
  });
}

/**
 * The `codex-exec` driver: `@openai/codex-sdk`, one `codex exec` per turn; a session starts no
 * process until its first turn.
 */
export function createCodexExecDriver(): ProviderDriver<CodexExecOptions> {
  return codexDriver<CodexExecOptions>({
    driverKind: "codex-exec",
    displayName: "Codex (exec)",
    optionsSchema: codexExecOptionsSchema,
    optionsOf: codexExecOptionsOf,
    capabilities: CODEX_EXEC_CAPABILITIES,
    library: findCodexSdk,
    session: async (setup, input) =>
      new CodexExecSession(
        {
          ...setup,
          sdk: await loadCodexSdk(
            setup.context,
            codexEnvironment({ instance: setup.instance, binary: null, grant: null }),
          ),
        },
        input,
      ),
  });
}
