import { makePrivateDir } from "../util/private-files.js";
import { join } from "node:path";
import {
  SPECIFICATION_VERSION,
  SPEC_SEMVER,
  NO_CAPABILITIES,
  decodeCapabilities,
  type ProbeDepth,
  type PluginContext,
  type ProcessHelpers,
  type ProviderCapabilities,
  type ProviderDriver,
  type ProviderInstanceDescriptor,
  type ProviderStatus,
} from "../spec/index.js";
import type { AvailabilityReadOptions, ProviderAvailability, ProviderInstance } from "../engine/provider-catalog.js";
import { type PluginCatalog, PluginHostToken, ProcessRunnerToken } from "../plugin-host/ports.js";
import type { ManagedProviders } from "./ports.js";
import type { ProviderInstanceConfig } from "../config/config-schema.js";
import { configError } from "../config/config-loader.js";
import { type Logger, LoggerToken } from "../logging/logger.js";
import { type SwitchyardPaths, PathsToken } from "../config/paths.js";
import { HOST_VERSION } from "../util/host-version.js";
import { type Clock, ClockToken } from "../util/clock.js";
import { inject, injectable } from "tsyringe";
import { ProviderSnapshots, type Snapshot } from "./provider-snapshots.js";
import { watchSessionOpens } from "./session-open-watch.js";

export type {
  AvailabilityReadOptions,
  InstanceRefusalCode,
  ProviderAvailability,
  ProviderInstance,
} from "../engine/provider-catalog.js";

/** How often the provider snapshot is refreshed when the config does not say. */
export const DEFAULT_STATUS_REFRESH_MS = 5 * 60_000;

/** Validates driver options with the driver's Standard Schema; issues name the config path. */
async function validateOptions(
  instance: ProviderInstanceConfig,
  index: number,
  schema: NonNullable<ProviderDriver["optionsSchema"]> | undefined,
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
 *
 * What an instance can do is decoded here, pessimistically (the spec's `decodeCapabilities`),
 * and kept: when the instance is created, and again whenever the adapter may have refined it
 * (after each probe and each session it opened: an ACP agent negotiates its capabilities at
 * `initialize`, which both run). Everything in core reads {@link capabilities}; nothing calls
 * `adapter.capabilities()` itself, so no path sees a record the decoder has not checked.
 */
@injectable()
export class ProviderRegistry implements ManagedProviders {
  private instances: ProviderInstance[] = [];
  /** The decoded capability record of every instance, by id. */
  private decoded = new Map<string, ProviderCapabilities>();
  /** The decoder's last warnings per instance, so each change is logged once. */
  private decodeWarnings = new Map<string, string>();
  private readonly snapshots: ProviderSnapshots<ProviderAvailability>;

  constructor(
    @inject(PluginHostToken) private readonly pluginHost: PluginCatalog,
    @inject(ProcessRunnerToken) private readonly processRunner: ProcessHelpers,
    @inject(PathsToken) private readonly paths: SwitchyardPaths,
    @inject(LoggerToken) private readonly logger: Logger,
    @inject(ClockToken) private readonly clock: Clock,
  ) {
    this.snapshots = new ProviderSnapshots<ProviderAvailability>(
      (instanceId, depth) => this.probe(this.get(instanceId)!, depth),
      (instanceId, message) => this.unprobed(this.get(instanceId)!, `The status probe failed: ${message}`),
      clock,
      logger,
    );
  }

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
        instances.push({
          ...base,
          pluginName: loaded.plugin.name,
          adapter: null,
          refusal: { code: "disabled", message: `Provider instance "${config.id}" is disabled in the config.` },
        });
        continue;
      }
      try {
        const adapter = await loaded.driver.create({
          instance: descriptor,
          options,
          context: this.contextFor(loaded.plugin.name, config.id),
        });
        if (adapter.specificationVersion !== SPECIFICATION_VERSION) {
          throw new Error(
            `create() returned an adapter with specificationVersion ${JSON.stringify(adapter.specificationVersion)}`,
          );
        }
        const watched = watchSessionOpens(adapter, {
          opened: () => this.redecode(config.id),
          // A session that fails to open may mean the harness broke since the last probe.
          failed: () => this.sessionOpenFailed(config.id),
        });
        instances.push({ ...base, pluginName: loaded.plugin.name, adapter: watched, refusal: null });
      } catch (error) {
        const problem = error instanceof Error ? error.message : String(error);
        const message = `Plugin "${loaded.plugin.name}" refused for instance "${config.id}": create() threw: ${problem}. Wanted spec range: ${loaded.plugin.wantedRange ?? "none declared"}; this host implements spec ${SPEC_SEMVER} (${SPECIFICATION_VERSION}).`;
        this.logger.warn("provider instance refused", { instance: config.id, driver: config.driver, reason: message });
        instances.push({
          ...base,
          pluginName: loaded.plugin.name,
          adapter: null,
          refusal: { code: "create_failed", message },
        });
      }
    }
    this.instances = instances;
    this.decoded = new Map();
    this.decodeWarnings = new Map();
    for (const instance of instances) this.redecode(instance.descriptor.id);
    // New adapters: whatever was known about the old ones no longer holds.
    this.snapshots.reset(instances.map((instance) => instance.descriptor.id));
  }

  /**
   * Decodes an instance's capabilities again: its adapter's live record, else (no adapter) its
   * driver's static declaration. Never throws: an adapter whose `capabilities()` throws keeps
   * the record it had (the weakest one at first), with a warning.
   */
  private redecode(instanceId: string): void {
    const instance = this.get(instanceId);
    if (instance === null) return;
    let raw: unknown;
    try {
      raw =
        instance.adapter !== null
          ? instance.adapter.capabilities()
          : (this.pluginHost.driver(instance.descriptor.driver)?.driver.capabilities ?? {});
    } catch (error) {
      this.logger.warn("a provider adapter's capabilities() threw; keeping what was known", {
        instance: instanceId,
        error: error instanceof Error ? error.message : String(error),
      });
      if (!this.decoded.has(instanceId)) this.decoded.set(instanceId, decodeCapabilities({}).capabilities);
      return;
    }
    const { capabilities, warnings } = decodeCapabilities(raw);
    this.decoded.set(instanceId, capabilities);
    const said = warnings.join("; ");
    if (said !== (this.decodeWarnings.get(instanceId) ?? "")) {
      this.decodeWarnings.set(instanceId, said);
      if (warnings.length > 0)
        this.logger.warn("provider capabilities were weakened while decoding", { instance: instanceId, warnings });
    }
  }

  /** The context a plugin gets for one instance. */
  contextFor(pluginName: string, instanceId: string): PluginContext {
    const safe = pluginName.replace(/[^a-zA-Z0-9._-]+/g, "_");
    const cacheDir = join(this.paths.cacheDir, "plugins", safe);
    const dataDir = join(this.paths.dataDir, "plugins", safe);
    // Created when a plugin first asks for them, so loading plugins and listing providers
    // create nothing.
    const onDemand = (dir: string) => () => makePrivateDir(dir);
    const paths = Object.defineProperties(
      { home: this.paths.home },
      {
        cacheDir: { get: onDemand(cacheDir), enumerable: true },
        dataDir: { get: onDemand(dataDir), enumerable: true },
      },
    ) as PluginContext["paths"];
    return {
      specVersion: SPEC_SEMVER,
      hostVersion: HOST_VERSION,
      logger: this.logger.child({ plugin: pluginName, instance: instanceId }),
      paths,
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

  /**
   * What an instance can do: the decoded record (see the class comment). An unknown instance
   * gets the weakest record.
   */
  capabilities(instanceId: string): ProviderCapabilities {
    return this.decoded.get(instanceId) ?? NO_CAPABILITIES;
  }

  /**
   * Starts keeping the provider snapshot fresh: every instance is probed now (a quick
   * `inspect`, then `full`) and again every `intervalMs`.
   */
  startRefreshing(intervalMs: number = DEFAULT_STATUS_REFRESH_MS): void {
    this.snapshots.start(() => this.instances.map((instance) => instance.descriptor.id), intervalMs);
  }

  /**
   * What is known about an instance now, for answers that must not wait on a harness
   * (orchestrator_capabilities): the latest probe result, waiting at most a moment for an
   * instance's first probe; `state: "checking"` when it has not answered by then. Never throws.
   */
  async snapshotAll(): Promise<ProviderAvailability[]> {
    const ids = this.instances.map((instance) => instance.descriptor.id);
    const found = await this.snapshots.within(ids);
    return this.instances.map((instance) => this.answer(instance, found.get(instance.descriptor.id) ?? null));
  }

  /**
   * The deepest answer for an instance, for decisions that run work on it: the latest full
   * probe result, else the one a probe gives now (joining one already running); with `refresh`,
   * a new probe. Null for an unknown instance. Never throws.
   */
  async availability(instanceId: string, options: AvailabilityReadOptions = {}): Promise<ProviderAvailability | null> {
    const instance = this.get(instanceId);
    if (instance === null) return null;
    const snapshot = options.refresh
      ? await this.snapshots.refresh(instanceId, "full")
      : await this.snapshots.settled(instanceId);
    return this.answer(instance, snapshot);
  }

  /** {@link availability} for every instance, in config order. */
  async availabilityAll(options: AvailabilityReadOptions = {}): Promise<ProviderAvailability[]> {
    return Promise.all(
      this.instances.map(async (instance) => (await this.availability(instance.descriptor.id, options))!),
    );
  }

  /**
   * Probes every instance once at `depth`, outside the snapshot, for a one-shot listing
   * (`switchyard providers`): `inspect` starts no harness session and writes nothing into a
   * harness's home. Never throws.
   */
  async probeAll(depth: ProbeDepth): Promise<ProviderAvailability[]> {
    return Promise.all(
      this.instances.map(async (instance) => ({
        ...(await this.probe(instance, depth)),
        checkedAt: new Date(this.clock.nowMs()).toISOString(),
      })),
    );
  }

  /** How old the answer behind an unavailable verdict may be before it is checked again. */
  get recheckUnavailableMs(): number {
    return this.snapshots.timings.recheckUnavailableMs;
  }

  /** Milliseconds since the probe behind `availability` started (0 while checking). */
  ageMs(availability: ProviderAvailability): number {
    return availability.checkedAt === null ? 0 : Math.max(0, this.clock.nowMs() - Date.parse(availability.checkedAt));
  }

  /** A failed open is the surest sign the snapshot is wrong: check again (joining a check already running). */
  private sessionOpenFailed(instanceId: string): void {
    this.logger.info("a provider session failed to open; checking the provider again", { instance: instanceId });
    void this.snapshots.refresh(instanceId, "full").catch(() => undefined);
  }

  private answer(instance: ProviderInstance, snapshot: Snapshot<ProviderAvailability> | null): ProviderAvailability {
    if (snapshot !== null) {
      // The capabilities as decoded now: a session opened since the probe may have refined them.
      return {
        ...snapshot.value,
        capabilities: this.capabilities(instance.descriptor.id),
        depth: snapshot.depth,
        checkedAt: new Date(snapshot.probedAtMs).toISOString(),
      };
    }
    if (instance.adapter === null) return this.unprobed(instance, instance.refusal?.message ?? "No adapter.");
    const since = this.snapshots.checkingSinceMs(instance.descriptor.id);
    const seconds = since === null ? 0 : Math.max(0, (this.clock.nowMs() - since) / 1000);
    return {
      ...this.unprobed(
        instance,
        `Its status is not known yet: the first check started ${seconds.toFixed(1)} s ago and is still running. Call again in a few seconds; work sent to it waits for the check.`,
      ),
      state: "checking",
    };
  }

  /** An answer without a status: the instance has no adapter, or its probe failed. */
  private unprobed(instance: ProviderInstance, reason: string): ProviderAvailability {
    const { descriptor } = instance;
    return {
      instanceId: descriptor.id,
      driver: descriptor.driver,
      displayName: descriptor.displayName,
      enabled: instance.enabled,
      hasAdapter: instance.adapter !== null,
      capabilities: this.capabilities(descriptor.id),
      status: null,
      available: false,
      reason,
      models: descriptor.customModels.map((id) => ({ id, custom: true, legacy: false })),
      state: "checked",
      depth: null,
      checkedAt: null,
    };
  }

  /** Probes one instance at `depth`. Never throws. */
  private async probe(instance: ProviderInstance, depth: ProbeDepth): Promise<ProviderAvailability> {
    const { descriptor } = instance;
    const base = this.unprobed(instance, "");
    const custom = base.models;
    if (instance.adapter === null) return this.unprobed(instance, instance.refusal?.message ?? "No adapter.");
    let status: ProviderStatus;
    try {
      status = await instance.adapter.probe({ depth });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return this.unprobed(instance, `The status probe failed: ${message}`);
    } finally {
      // A full probe may have met the harness (an ACP `initialize`) and refined what it can do.
      this.redecode(descriptor.id);
    }
    const models: ProviderAvailability["models"][number][] = [...custom];
    for (const model of status.models) {
      // The efforts a model takes are the provider's word, also for a model the user listed as custom.
      const efforts =
        model.efforts !== undefined && model.efforts.length > 0
          ? {
              efforts: [...model.efforts],
              ...(model.defaultEffort !== undefined ? { defaultEffort: model.defaultEffort } : {}),
            }
          : {};
      const source = model.source !== undefined ? { source: model.source } : {};
      const index = models.findIndex((known) => known.id === model.id);
      if (index >= 0) models[index] = { ...models[index]!, ...efforts, ...source };
      else models.push({ id: model.id, custom: false, legacy: model.legacy === true, ...efforts, ...source });
    }
    let reason: string | null = null;
    if (!status.installed) reason = status.message ?? `The ${descriptor.driver} harness is not installed.`;
    else if (!status.executable)
      reason = status.message ?? `The ${descriptor.driver} harness is installed but cannot be started.`;
    else if (status.authenticated === false)
      reason = status.message ?? `The ${descriptor.driver} harness is not authenticated.`;
    return {
      ...base,
      capabilities: this.capabilities(descriptor.id),
      status,
      available: reason === null,
      reason,
      models,
      depth,
    };
  }

  /** Stops the refreshing (letting running probes finish) and disposes every adapter. */
  async dispose(): Promise<void> {
    await this.snapshots.stop();
    await Promise.allSettled(this.instances.map(async (instance) => instance.adapter?.dispose?.()));
  }
}
