import { mkdir } from "node:fs/promises";
import {
  SwitchyardError,
  defineAdapter,
  defineDriver,
  harnessNotFoundMessage,
  harnessNotFoundStatus,
  withHarnessVerdict,
  type CreateInstanceInput,
  type ModelDescriptor,
  type OrchestrationAdapter,
  type PluginContext,
  type ProviderDriver,
  type ProviderInstanceDescriptor,
  type ProviderStatus,
} from "@switchyard/sdk";
import { findOpenCode, type OpenCodeBinary, type OpenCodeLookup } from "./opencode-binary.js";
import { OPENCODE_CAPABILITIES } from "./opencode-capabilities.js";
import {
  instanceDirectories,
  readUserConfig,
  serverConfig,
  serverEnvironment,
  userConfigPath,
} from "./opencode-config.js";
import { openCodeOptionsSchema, type OpenCodeOptions } from "./opencode-options.js";
import { callOpenCode } from "./opencode-rest.js";
import { OpenCodeServer } from "./opencode-server.js";
import { OpenCodeProviderSession } from "./opencode-session.js";
import { ServerStartGate } from "./opencode-start-gate.js";
import type { Provider } from "./opencode-wire.js";

/**
 * The models OpenCode can run, in the user's order: the configured default model first, then
 * every model of every provider OpenCode has credentials for, in OpenCode's order; models
 * OpenCode marks deprecated are legacy. A model the user's opencode.json names (`configured`)
 * is the config's; the rest are OpenCode's catalog of the providers it found keys for.
 */
export function modelCatalog(
  providers: readonly Provider[],
  defaultModel: string | null,
  customModels: readonly string[],
  configured: ReadonlySet<string> = new Set(),
): ModelDescriptor[] {
  const listed: ModelDescriptor[] = [];
  for (const provider of providers) {
    for (const model of Object.values(provider.models)) {
      const id = `${provider.id}/${model.id}`;
      listed.push({
        id,
        displayName: `${model.name} (${provider.name})`,
        ...(model.status === "deprecated" ? { legacy: true } : {}),
        ...(id === defaultModel ? { isDefault: true } : {}),
        source: configured.has(id) ? "harness_config" : "harness_catalog",
        // OpenCode's reasoning settings are the model's named variants (`high`, `max`…): the
        // efforts it takes, passed back as the prompt's `variant`.
        ...(Object.keys(model.variants ?? {}).length > 0 ? { efforts: Object.keys(model.variants!) } : {}),
      });
    }
  }
  const first = listed.filter((model) => model.isDefault === true);
  const rest = listed.filter((model) => model.isDefault !== true);
  const custom = customModels
    .filter((id) => !listed.some((model) => model.id === id))
    .map((id): ModelDescriptor => ({ id }));
  return [...first, ...custom, ...rest];
}

/** What the adapter of one instance needs. */
interface OpenCodeInstance {
  readonly instance: ProviderInstanceDescriptor;
  readonly options: OpenCodeOptions;
  readonly context: PluginContext;
}

function lookupOf({ instance, options, context }: OpenCodeInstance): Promise<OpenCodeLookup> {
  return findOpenCode(options, context, serverEnvironment(instance, {}));
}

/** The model ids a config names itself: its default model and its own providers' models. */
function configuredModelIds(config: Record<string, unknown>): string[] {
  const defaultModel = typeof config["model"] === "string" ? config["model"] : null;
  const ids: string[] = defaultModel !== null ? [defaultModel] : [];
  const providers =
    typeof config["provider"] === "object" && config["provider"] !== null
      ? (config["provider"] as Record<string, { models?: unknown }>)
      : {};
  for (const [provider, entry] of Object.entries(providers)) {
    const models = typeof entry?.models === "object" && entry.models !== null ? Object.keys(entry.models) : [];
    for (const model of models) ids.push(`${provider}/${model}`);
  }
  return [...new Set(ids)];
}

/** The models a config names itself (its default model and its own providers' models), then the custom ones. */
export function configuredModels(config: Record<string, unknown>, customModels: readonly string[]): ModelDescriptor[] {
  const defaultModel = typeof config["model"] === "string" ? config["model"] : null;
  const ids = configuredModelIds(config);
  const fromConfig = ids.map((id): ModelDescriptor => ({
    id,
    ...(id === defaultModel ? { isDefault: true } : {}),
    source: "harness_config",
  }));
  return [...fromConfig, ...customModels.filter((id) => !ids.includes(id)).map((id): ModelDescriptor => ({ id }))];
}

/**
 * `full` (the default): starts a server with the instance's config and no MCP, asks it for the
 * providers it can use and the default model, and stops it. `inspect`: starts nothing, writes
 * nothing; finds the binary and reads the config, and lists the models the config names. Never
 * a session, never a model call.
 */
async function probe(
  subject: OpenCodeInstance,
  gate: ServerStartGate,
  depth: "inspect" | "full",
): Promise<ProviderStatus> {
  const custom = subject.instance.customModels.map((id): ModelDescriptor => ({ id }));
  const { search, binary } = await lookupOf(subject);
  if (binary === null) return harnessNotFoundStatus(search, custom);
  // Where OpenCode was found and whether its version is one this plugin was tested with.
  return withHarnessVerdict(search, await probeFound(subject, gate, depth, binary, custom));
}

/** {@link probe} once the binary is found. */
async function probeFound(
  subject: OpenCodeInstance,
  gate: ServerStartGate,
  depth: "inspect" | "full",
  binary: OpenCodeBinary,
  custom: ModelDescriptor[],
): Promise<ProviderStatus> {
  const { instance, options, context } = subject;
  if (depth === "inspect") {
    try {
      const user = await readUserConfig(userConfigPath(options, instance, { ...process.env, ...instance.environment }));
      return {
        installed: true,
        executable: true,
        authenticated: "unknown",
        ...(binary.version !== undefined ? { version: binary.version } : {}),
        models: configuredModels(user.config, instance.customModels),
      };
    } catch (error) {
      return {
        installed: true,
        executable: true,
        authenticated: "unknown",
        models: custom,
        message: error instanceof Error ? error.message : String(error),
      };
    }
  }
  const dirs = instanceDirectories(context.paths.dataDir, instance.id);
  await mkdir(dirs.root, { recursive: true });
  let server: OpenCodeServer | null = null;
  try {
    const user = await readUserConfig(userConfigPath(options, instance, { ...process.env, ...instance.environment }));
    const config = serverConfig(user.config, { runtimeMode: "approval-required", grant: null });
    const env = serverEnvironment(instance, {
      XDG_DATA_HOME: dirs.data,
      XDG_STATE_HOME: dirs.state,
      XDG_CACHE_HOME: dirs.cache,
      OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
    });
    const started = await gate.run(binary.version ?? binary.command, () =>
      OpenCodeServer.start({
        command: binary.command,
        cwd: dirs.root,
        env,
        processes: context.process,
        logger: context.logger,
        startupTimeoutMs: options.startupTimeoutMs,
      }),
    );
    server = started;
    const [providers, current] = await Promise.all([
      callOpenCode(
        "config.providers",
        (signal) => started.client.config.providers({}, { signal }),
        options.requestTimeoutMs,
      ),
      callOpenCode("config.get", (signal) => started.client.config.get({}, { signal }), options.requestTimeoutMs),
    ]);
    const defaultModel = typeof current.model === "string" ? current.model : null;
    const models = modelCatalog(
      providers.providers,
      defaultModel,
      instance.customModels,
      new Set(configuredModelIds(user.config)),
    );
    return {
      installed: true,
      executable: true,
      authenticated: providers.providers.length > 0,
      ...(binary.version !== undefined ? { version: binary.version } : {}),
      models,
      ...(providers.providers.length === 0
        ? {
            message:
              "OpenCode has no provider it can use: put a provider's API key in the instance environment, or configure one in opencode.json.",
          }
        : {}),
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const configBroken = error instanceof SwitchyardError && error.code === "config_invalid";
    return {
      installed: true,
      executable: configBroken,
      authenticated: false,
      models: custom,
      message: configBroken ? message : `opencode serve did not start: ${message}`,
    };
  } finally {
    await server?.stop();
  }
}

/** The OrchestrationAdapter of one OpenCode instance: one `opencode serve` per provider session. */
export function createOpenCodeAdapter(
  subject: OpenCodeInstance,
): OrchestrationAdapter & { readonly sessions: ReadonlySet<OpenCodeProviderSession> } {
  const gate = new ServerStartGate(instanceDirectories(subject.context.paths.dataDir, subject.instance.id).root);
  return defineAdapter<OpenCodeProviderSession>({
    instance: subject.instance,
    driverKind: "opencode",
    capabilities: OPENCODE_CAPABILITIES,
    probe: (options) => probe(subject, gate, options?.depth ?? "full"),
    async createSession(input, onClosed) {
      const { search, binary } = await lookupOf(subject);
      if (binary === null)
        throw new SwitchyardError("provider_unavailable", harnessNotFoundMessage(search), {
          opencodePath: subject.options.opencodePath ?? null,
        });
      return new OpenCodeProviderSession({ ...subject, binary, gate, onClosed }, input);
    },
  });
}

/** The `opencode` driver. */
export function createOpenCodeDriver(): ProviderDriver<OpenCodeOptions> {
  return defineDriver<OpenCodeOptions>({
    driverKind: "opencode",
    displayName: "OpenCode",
    optionsSchema: openCodeOptionsSchema,
    capabilities: OPENCODE_CAPABILITIES,
    create: ({ instance, options, context }: CreateInstanceInput<OpenCodeOptions>) =>
      createOpenCodeAdapter({ instance, options, context }),
  });
}
