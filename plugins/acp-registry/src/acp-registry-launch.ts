import {
  RegistryCatalog,
  isRegistryError,
  type AgentLaunchSpec,
  type AgentReadiness,
} from "@switchyard/registry-cache";
import { SwitchyardError, type PluginContext } from "@switchyard/sdk";
import type { AcpLaunchCommand, AcpLaunchInput } from "@switchyard/sdk/acp";
import type { AcpRegistryOptions } from "./acp-registry-options.js";
import { acpRegistryCacheDir, resolveRegistryUrl, toAcpLaunch } from "./acp-registry-wire.js";

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
      catalog = new RegistryCatalog({
        cacheDir,
        registryUrl,
        logger: { warn: (message, fields) => logger.warn(message, fields ?? {}) },
      });
      this.catalogs.set(key, catalog);
    }
    return catalog;
  }
}

/** A registry failure as the typed error that crosses the plugin boundary. */
function unavailable(agentId: string, error: unknown): SwitchyardError {
  if (isRegistryError(error)) {
    return new SwitchyardError("provider_unavailable", error.message, {
      agentId,
      reason: error.reason,
      ...error.details,
    });
  }
  return new SwitchyardError(
    "provider_unavailable",
    `ACP Registry agent "${agentId}" cannot be launched: ${error instanceof Error ? error.message : String(error)}`,
    {
      agentId,
    },
  );
}

/**
 * Where the agent comes from. A status probe asks the catalog's `inspect` (readiness without
 * side effects: never installs, never spawns; for an `inspect` probe, no network) and reports anything but `ready` as not
 * installed, with the catalog's message (e.g. "Run `switchyard registry install <id>`");
 * sessions use `resolveLaunch`. A command override skips the install check but keeps the
 * registry-declared args and env.
 */
export async function resolveRegistryLaunch(
  catalogs: AcpRegistryCatalogs,
  input: AcpLaunchInput<AcpRegistryOptions>,
): Promise<AcpLaunchCommand> {
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
