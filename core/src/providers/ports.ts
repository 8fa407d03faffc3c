import type { ProviderInstanceConfig } from "../config/config-schema.js";
import type { ProviderCatalog, ProviderAvailability } from "../engine/provider-catalog.js";
import type { ProbeDepth } from "../spec/index.js";
import { token } from "../util/di-token.js";

/**
 * The provider registry as the host owns it (`ProviderRegistry`): the catalog work reads, plus
 * building the instances, keeping their snapshot fresh and disposing them.
 */
export interface ManagedProviders extends ProviderCatalog {
  /** Creates an adapter for every instance (bad driver options are `config_invalid`). */
  initialize(configs: readonly ProviderInstanceConfig[]): Promise<void>;
  /** Starts keeping the provider snapshot fresh: every instance now, then every `intervalMs`. */
  startRefreshing(intervalMs?: number): void;
  /** Probes every instance once at `depth`, outside the snapshot (a one-shot listing). Never throws. */
  probeAll(depth: ProbeDepth): Promise<ProviderAvailability[]>;
  /** Stops the refreshing and disposes every adapter. */
  dispose(): Promise<void>;
}

/** DI token: `ProviderRegistry`, as the host owns it (building, refreshing, disposing instances). */
export const ProviderRegistryToken = token<ManagedProviders>("ProviderRegistry");
