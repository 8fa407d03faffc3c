import { RegistryCatalog, isRegistryError, type AgentLaunchSpec, type AgentReadiness } from "@switchyard/registry-cache";
import { z } from "zod";
import { RUNTIME_MODES, SwitchyardError, type PluginContext, type ProviderDriver } from "@switchyard/sdk";
import { createAcpDriver, type AcpAdapterOptions, type AcpFlavor, type AcpLaunchInput, type acpSdk } from "@switchyard/sdk/acp";
import { ACP_REGISTRY_CAPABILITIES } from "./acp-registry-capabilities.js";
import { acpRegistryCacheDir, resolveRegistryUrl, toAcpLaunch } from "./acp-registry-wire.js";

/** The `initialize` advertisements an instance may tell Switchyard to ignore (paths in `agentCapabilities`). */
export const IGNORABLE_AGENT_CAPABILITIES = [
  "loadSession",
  "sessionCapabilities.resume",
  "sessionCapabilities.fork",
  "mcpCapabilities.http",
  "mcpCapabilities.sse",
] as const;

/** One of {@link IGNORABLE_AGENT_CAPABILITIES}. */
export type IgnorableAgentCapability = (typeof IGNORABLE_AGENT_CAPABILITIES)[number];

const modeId = z.string().min(1, "must be an agent mode id");

/** Validates ACP Registry driver options. */
export const acpRegistryOptionsSchema = z
  .object({
    /** The registry agent id (`codex-acp`, `gemini`, …), as `switchyard registry search` lists it. */
    agentId: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]*$/, "must be a registry agent id (lowercase letters, digits, '.', '_' or '-'); find one with `switchyard registry search`"),
    /** The index URL; default `$SWITCHYARD_ACP_REGISTRY_URL`, else the public ACP Registry. */
    registryUrl: z
      .string()
      .min(1)
      .superRefine((url, ctx) => {
        try {
          // The catalog's constructor applies the URL policy (https; http only on loopback) and touches no disk.
          new RegistryCatalog({ cacheDir: "/nonexistent", registryUrl: url });
        } catch (error) {
          ctx.addIssue({ code: "custom", message: error instanceof Error ? error.message : String(error) });
        }
      })
      .optional(),
    /**
     * A local executable (path, or name on PATH) to run instead of the installed one. The
     * registry-declared args and env are kept. With an override nothing has to be installed.
     */
    commandOverride: z.string().min(1).optional(),
    /** The `authenticate` method to use when the agent lists auth methods (e.g. `gemini-api-key`); default: the agent's own login. */
    authMethodId: z.string().min(1).optional(),
    /** Environment for the agent, over the registry-declared env (and the instance's `environment`). */
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "is not an environment variable name"), z.string()).optional(),
    /**
     * Features the agent advertises at `initialize` that Switchyard should treat as absent,
     * because this agent (version) advertises them but cannot deliver them.
     */
    ignoreAgentCapabilities: z.array(z.enum(IGNORABLE_AGENT_CAPABILITIES)).optional(),
    /**
     * Which of the agent's session modes stand for Switchyard's runtime modes and plan mode
     * (e.g. Gemini CLI: `{"runtime": {"full-access": "yolo", "auto-accept-edits": "autoEdit",
     * "approval-required": "default"}}`). Without an entry the adapter uses a mode with the same
     * id, else the agent's initial mode, and enforces the runtime mode through its answers to
     * permission requests.
     */
    modes: z
      .object({ runtime: z.partialRecord(z.enum(RUNTIME_MODES), modeId).optional(), plan: modeId.optional() })
      .strict()
      .optional(),
  })
  .strict();

/** Driver options of an ACP Registry instance. */
export type AcpRegistryOptions = z.output<typeof acpRegistryOptionsSchema>;

/**
 * The catalogs of one driver: one `RegistryCatalog` per cache directory and index URL, shared
 * by every instance (probe, session start) so index loading, platform selection and the
 * post-install reservation are the same everywhere. Never installs: `switchyard registry
 * install` does.
 */
export class AcpRegistryCatalogs {
  private readonly catalogs = new Map<string, RegistryCatalog>();

  /** The catalog for an instance: `<home>/cache/acp-registry` and its registry URL. */
  catalogFor(context: PluginContext, options: AcpRegistryOptions): RegistryCatalog {
    const cacheDir = acpRegistryCacheDir(context.paths.home);
    const registryUrl = resolveRegistryUrl(options.registryUrl);
    const key = `${cacheDir}\n${registryUrl}`;
    let catalog = this.catalogs.get(key);
    if (catalog === undefined) {
      const logger = context.logger.child({ component: "acp-registry-catalog" });
      catalog = new RegistryCatalog({ cacheDir, registryUrl, logger: { warn: (message, fields) => logger.warn(message, fields ?? {}) } });
      this.catalogs.set(key, catalog);
    }
    return catalog;
  }
}

/** A registry failure as the typed error that crosses the plugin boundary. */
function unavailable(agentId: string, error: unknown): SwitchyardError {
  if (isRegistryError(error)) {
    return new SwitchyardError("provider_unavailable", error.message, { agentId, reason: error.reason, ...error.details });
  }
  return new SwitchyardError("provider_unavailable", `ACP Registry agent "${agentId}" cannot be launched: ${error instanceof Error ? error.message : String(error)}`, {
    agentId,
  });
}

/**
 * Where the agent comes from. A status probe asks the catalog's `inspect` (readiness without
 * side effects: never installs, never spawns; for an `inspect` probe, no network) and reports anything but `ready` as not
 * installed, with the catalog's message (e.g. "Run `switchyard registry install <id>`");
 * sessions use `resolveLaunch`. A command override skips the install check but keeps the
 * registry-declared args and env.
 */
async function resolveRegistryLaunch(catalogs: AcpRegistryCatalogs, input: AcpLaunchInput<AcpRegistryOptions>) {
  const { options, context, purpose } = input;
  const catalog = catalogs.catalogFor(context, options);
  if (purpose === "probe" && options.commandOverride === undefined) {
    let readiness: AgentReadiness;
    try {
      // A quick look (listing) reads the cached index only; the server's full probe may refresh it.
      readiness = await catalog.inspect(options.agentId, { offline: input.depth === "inspect" });
    } catch (error) {
      throw unavailable(options.agentId, error);
    }
    if (readiness.state !== "ready" || readiness.launch === undefined) {
      throw new SwitchyardError("provider_unavailable", readiness.message, {
        agentId: options.agentId,
        state: readiness.state,
        ...(readiness.reason !== undefined ? { reason: readiness.reason } : {}),
      });
    }
    return toAcpLaunch(readiness.launch, options.env);
  }
  let spec: AgentLaunchSpec;
  try {
    spec = await catalog.resolveLaunch(options.agentId, {
      ...(options.commandOverride !== undefined ? { commandOverride: options.commandOverride } : {}),
      offline: purpose === "probe" && input.depth === "inspect",
    });
  } catch (error) {
    throw unavailable(options.agentId, error);
  }
  return toAcpLaunch(spec, options.env);
}

/** The `initialize` response with the features an instance ignores taken out. */
export function withoutIgnoredCapabilities(init: acpSdk.InitializeResponse, ignored: readonly IgnorableAgentCapability[] | undefined): acpSdk.InitializeResponse {
  if (ignored === undefined || ignored.length === 0) return init;
  const caps = init.agentCapabilities ?? {};
  const sessionCaps = { ...(caps.sessionCapabilities ?? {}) };
  const mcp = { ...(caps.mcpCapabilities ?? {}) };
  if (ignored.includes("sessionCapabilities.resume")) delete sessionCaps.resume;
  if (ignored.includes("sessionCapabilities.fork")) delete sessionCaps.fork;
  if (ignored.includes("mcpCapabilities.http")) mcp.http = false;
  if (ignored.includes("mcpCapabilities.sse")) mcp.sse = false;
  return {
    ...init,
    agentCapabilities: {
      ...caps,
      ...(ignored.includes("loadSession") ? { loadSession: false } : {}),
      sessionCapabilities: sessionCaps,
      mcpCapabilities: mcp,
    },
  };
}

/**
 * The generic ACP Registry flavor of the shared ACP adapter: any registry agent, with no
 * provider-specific extensions. Readiness is a disposable `session/new` (success = the agent
 * is authenticated; its models and modes are read from it).
 */
export function createAcpRegistryFlavor(catalogs: AcpRegistryCatalogs = new AcpRegistryCatalogs()): AcpFlavor<AcpRegistryOptions> {
  return {
    driverKind: "acp-registry",
    displayName: "ACP Registry agent",
    optionsSchema: acpRegistryOptionsSchema,
    capabilities: ACP_REGISTRY_CAPABILITIES,
    resolveLaunch: (input) => resolveRegistryLaunch(catalogs, input),
    authMethodId: ({ options }) => options.authMethodId,
    mcpTransport: "auto",
    // A registry agent is a black box: a stop is `session/cancel`; an agent that ignores it
    // has its turn ended after the cancel timeout rather than its process killed.
    hardInterrupt: "cancel",
    readinessProbe: "session",
    modes: ({ options }) => options.modes,
    hooks: { adjustInitialize: (init, { options }) => withoutIgnoredCapabilities(init, options.ignoreAgentCapabilities) },
  };
}

/** The `acp-registry` driver; `adapterOptions.channelFactory` replaces the process spawn (tests). */
export function createAcpRegistryDriver(adapterOptions: AcpAdapterOptions = {}): ProviderDriver<AcpRegistryOptions> {
  const driver = createAcpDriver(createAcpRegistryFlavor(new AcpRegistryCatalogs()), adapterOptions);
  return {
    ...driver,
    create: (input) => {
      // The generic driver cannot know which variable an agent reads its home from: say so
      // instead of silently ignoring the setting.
      if (input.instance.homePath !== null) {
        input.context.logger.warn("homePath is not used by the acp-registry driver; set the agent's home variable in `environment` or options.env", {
          instanceId: input.instance.id,
          homePath: input.instance.homePath,
        });
      }
      return driver.create(input);
    },
  };
}
