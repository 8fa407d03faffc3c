import { mkdirSync } from "node:fs";
import { join } from "node:path";
import {
  SPECIFICATION_VERSION,
  SPEC_SEMVER,
  decodeCapabilities,
  type OrchestrationAdapter,
  type PluginContext,
  type ProviderCapabilities,
  type ProviderInstanceDescriptor,
  type ProviderStatus,
} from "../spec/index.js";
import type { ProviderInstanceConfig } from "../config/config-schema.js";
import { configError } from "../config/config-loader.js";
import type { Logger } from "../logging/logger.js";
import type { PluginHost } from "../plugin-host/plugin-host.js";
import type { ProcessRunner } from "../plugin-host/process-runner.js";
import type { SwitchyardPaths } from "../config/paths.js";
import { HOST_VERSION } from "../util/host-version.js";
import type { Clock } from "../util/clock.js";
import { inject, injectable } from "tsyringe";
import { TOKENS } from "../di/tokens.js";

/** Why an instance cannot run work, before any probe. */
export type InstanceRefusalCode = "disabled" | "unknown_driver" | "create_failed";

/** One configured provider instance and what the host made of it. */
export interface ProviderInstance {
  readonly descriptor: ProviderInstanceDescriptor;
  readonly enabled: boolean;
  readonly pluginName: string | null;
  /** The adapter, when the driver loaded and `create` succeeded. */
  readonly adapter: OrchestrationAdapter | null;
  readonly refusal: { readonly code: InstanceRefusalCode; readonly message: string } | null;
  /** Position in the config (the user's order). */
  readonly order: number;
}

/** What a status check concluded. */
export interface ProviderAvailability {
  readonly instanceId: string;
  readonly driver: string;
  readonly displayName: string;
  readonly enabled: boolean;
  /** An OrchestrationAdapter resolved for it. */
  readonly hasAdapter: boolean;
  readonly status: ProviderStatus | null;
  /** It can run work now. */
  readonly available: boolean;
  /** Why not, in words a model or a person can act on. */
  readonly reason: string | null;
  /** Advertised models: custom models first, then the provider's, without duplicates. */
  readonly models: readonly { readonly id: string; readonly custom: boolean; readonly legacy: boolean }[];
  readonly capabilities: ProviderCapabilities;
}

const STATUS_TTL_MS = 60_000;

/** Validates driver options with the driver's Standard Schema; issues name the config path. */
async function validateOptions(
  instance: ProviderInstanceConfig,
  index: number,
  schema: NonNullable<import("../spec/index.js").ProviderDriver["optionsSchema"]> | undefined,
  configFile: string,
): Promise<unknown> {
  if (schema === undefined) return instance.options;
  const result = await schema["~standard"].validate(instance.options);
  if (result.issues === undefined) return result.value;
  throw configError(
    configFile,
    result.issues.map((issue) => ({
      path: ["providers", index, "options", ...(issue.path ?? []).map((p) => (typeof p === "object" ? p.key : p))],
      message: issue.message,
    })),
  );
}

/**
 * The configured provider instances, each backed by the adapter its driver created. Shared code
 * asks this registry what an instance can do; it never looks at driver names.
 */
@injectable()
export class ProviderRegistry {
  private instances: ProviderInstance[] = [];
  private readonly statusCache = new Map<string, { at: number; availability: ProviderAvailability }>();

  constructor(
    @inject(TOKENS.PluginHost) private readonly pluginHost: PluginHost,
    @inject(TOKENS.ProcessRunner) private readonly processRunner: ProcessRunner,
    @inject(TOKENS.Paths) private readonly paths: SwitchyardPaths,
    @inject(TOKENS.Logger) private readonly logger: Logger,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  /**
   * Creates an adapter for every instance. Bad driver options are a config error (thrown,
   * typed `config_invalid`); a driver that is missing or whose `create` throws only makes
   * that instance unavailable.
   */
  async initialize(configs: readonly ProviderInstanceConfig[]): Promise<void> {
    const instances: ProviderInstance[] = [];
    for (const [index, config] of configs.entries()) {
      const descriptor: ProviderInstanceDescriptor = {
        id: config.id,
        driver: config.driver,
        displayName: config.displayName ?? config.id,
        homePath: config.homePath ?? null,
        environment: config.environment,
        customModels: config.customModels,
      };
      const base = { descriptor, enabled: config.enabled, order: index };
      const loaded = this.pluginHost.driver(config.driver);
      if (loaded === null) {
        const known = this.pluginHost.driverKinds();
        instances.push({
          ...base,
          pluginName: null,
          adapter: null,
          refusal: {
            code: "unknown_driver",
            message: `No loaded plugin provides driver "${config.driver}" (loaded drivers: ${known.length > 0 ? known.join(", ") : "none"}). Run \`switchyard plugins list\` to see refused plugins.`,
          },
        });
        continue;
      }
      const options = await validateOptions(config, index, loaded.driver.optionsSchema, this.paths.configFile);
      if (!config.enabled) {
        instances.push({ ...base, pluginName: loaded.plugin.name, adapter: null, refusal: { code: "disabled", message: `Provider instance "${config.id}" is disabled in the config.` } });
        continue;
      }
      try {
        const adapter = await loaded.driver.create({ instance: descriptor, options, context: this.contextFor(loaded.plugin.name, config.id) });
        if (adapter.specificationVersion !== SPECIFICATION_VERSION) {
          throw new Error(`create() returned an adapter with specificationVersion ${JSON.stringify(adapter.specificationVersion)}`);
        }
        instances.push({ ...base, pluginName: loaded.plugin.name, adapter, refusal: null });
      } catch (error) {
        const problem = error instanceof Error ? error.message : String(error);
        const message = `Plugin "${loaded.plugin.name}" refused for instance "${config.id}": create() threw: ${problem}. Wanted spec range: ${loaded.plugin.wantedRange ?? "none declared"}; this host implements spec ${SPEC_SEMVER} (${SPECIFICATION_VERSION}).`;
        this.logger.warn("provider instance refused", { instance: config.id, driver: config.driver, reason: message });
        instances.push({ ...base, pluginName: loaded.plugin.name, adapter: null, refusal: { code: "create_failed", message } });
      }
    }
    this.instances = instances;
  }

  /** The context a plugin gets for one instance. */
  contextFor(pluginName: string, instanceId: string): PluginContext {
    const safe = pluginName.replace(/[^a-zA-Z0-9._-]+/g, "_");
    const cacheDir = join(this.paths.cacheDir, "plugins", safe);
    const dataDir = join(this.paths.dataDir, "plugins", safe);
    mkdirSync(cacheDir, { recursive: true });
    mkdirSync(dataDir, { recursive: true });
    return {
      specVersion: SPEC_SEMVER,
      hostVersion: HOST_VERSION,
      logger: this.logger.child({ plugin: pluginName, instance: instanceId }),
      paths: { home: this.paths.home, cacheDir, dataDir },
      process: this.processRunner,
    };
  }

  /** Every instance, in config order. */
  list(): readonly ProviderInstance[] {
    return this.instances;
  }

  /** One instance, or null. */
  get(instanceId: string): ProviderInstance | null {
    return this.instances.find((instance) => instance.descriptor.id === instanceId) ?? null;
  }

  /** What an instance can do (its adapter's live record, else its driver's declaration). */
  capabilities(instanceId: string): ProviderCapabilities {
    const instance = this.get(instanceId);
    if (instance?.adapter) return instance.adapter.capabilities();
    const driver = instance ? this.pluginHost.driver(instance.descriptor.driver) : null;
    return decodeCapabilities(driver?.driver.capabilities ?? {}).capabilities;
  }

  /** Probes an instance (cached for a minute unless `refresh`). Never throws. */
  async availability(instanceId: string, options: { refresh?: boolean } = {}): Promise<ProviderAvailability | null> {
    const instance = this.get(instanceId);
    if (instance === null) return null;
    const cached = this.statusCache.get(instanceId);
    if (!options.refresh && cached && this.clock.nowMs() - cached.at < STATUS_TTL_MS) return cached.availability;
    const availability = await this.probe(instance);
    this.statusCache.set(instanceId, { at: this.clock.nowMs(), availability });
    return availability;
  }

  /** Probes every instance, in config order. */
  async availabilityAll(options: { refresh?: boolean } = {}): Promise<ProviderAvailability[]> {
    return Promise.all(this.instances.map(async (instance) => (await this.availability(instance.descriptor.id, options))!));
  }

  private async probe(instance: ProviderInstance): Promise<ProviderAvailability> {
    const { descriptor } = instance;
    const capabilities = this.capabilities(descriptor.id);
    const custom = descriptor.customModels.map((id) => ({ id, custom: true, legacy: false }));
    const base = {
      instanceId: descriptor.id,
      driver: descriptor.driver,
      displayName: descriptor.displayName,
      enabled: instance.enabled,
      hasAdapter: instance.adapter !== null,
      capabilities,
    };
    if (instance.adapter === null) {
      return { ...base, status: null, available: false, reason: instance.refusal?.message ?? "No adapter.", models: custom };
    }
    let status: ProviderStatus;
    try {
      status = await instance.adapter.probe();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { ...base, status: null, available: false, reason: `The status probe failed: ${message}`, models: custom };
    }
    const seen = new Set(custom.map((m) => m.id));
    const models = [...custom];
    for (const model of status.models) {
      if (seen.has(model.id)) continue;
      seen.add(model.id);
      models.push({ id: model.id, custom: false, legacy: model.legacy === true });
    }
    let reason: string | null = null;
    if (!status.installed) reason = status.message ?? `The ${descriptor.driver} harness is not installed.`;
    else if (!status.executable) reason = status.message ?? `The ${descriptor.driver} harness is installed but cannot be started.`;
    else if (status.authenticated === false) reason = status.message ?? `The ${descriptor.driver} harness is not authenticated.`;
    return { ...base, capabilities: instance.adapter.capabilities(), status, available: reason === null, reason, models };
  }

  /** Disposes every adapter. */
  async dispose(): Promise<void> {
    await Promise.allSettled(this.instances.map((instance) => instance.adapter?.dispose?.()));
  }
}
