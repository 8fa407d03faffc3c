import type {
  ModelSource,
  OrchestrationAdapter,
  ProbeDepth,
  ProviderCapabilities,
  ProviderInstanceDescriptor,
  ProviderStatus,
} from "../spec/index.js";
import { token } from "../util/di-token.js";

// What the engine and the services need of the configured provider instances (the provider
// registry implements it; the composition root wires it). Shared code asks this catalog what an
// instance can do; it never looks at driver names.

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
  /**
   * Advertised models: custom models first, then the provider's, without duplicates. `source`
   * is where the provider's list got a model (absent for a custom model it does not list, and
   * when the provider does not say).
   */
  readonly models: readonly {
    readonly id: string;
    readonly custom: boolean;
    readonly legacy: boolean;
    readonly efforts?: readonly string[];
    readonly defaultEffort?: string;
    readonly source?: ModelSource;
  }[];
  readonly capabilities: ProviderCapabilities;
  /**
   * `checked`: a probe answered (see `depth`, `checkedAt`). `checking`: the instance's first
   * probe is still running, so nothing is known yet; `available` is false and `reason` says so.
   */
  readonly state: "checked" | "checking";
  /** How deep the probe behind this answer went, or null while checking. */
  readonly depth: ProbeDepth | null;
  /** When that probe started (ISO 8601), or null while checking. */
  readonly checkedAt: string | null;
}

/** How the snapshot is read: at once, or after the deepest check available. */
export interface AvailabilityReadOptions {
  /** Probe again now (joining a probe already running) and answer with its result. */
  readonly refresh?: boolean;
}

/** The configured provider instances, as work on them needs to see them. */
export interface ProviderCatalog {
  /** Every instance, in config order. */
  list(): readonly ProviderInstance[];
  /** One instance, or null. */
  get(instanceId: string): ProviderInstance | null;
  /** What an instance can do, decoded pessimistically (the weakest record for an unknown instance). */
  capabilities(instanceId: string): ProviderCapabilities;
  /** What is known about every instance now, waiting at most a moment for a first probe. Never throws. */
  snapshotAll(): Promise<ProviderAvailability[]>;
  /** The deepest answer for an instance, for decisions that run work on it. Null for an unknown instance. Never throws. */
  availability(instanceId: string, options?: AvailabilityReadOptions): Promise<ProviderAvailability | null>;
  /** {@link availability} for every instance, in config order. */
  availabilityAll(options?: AvailabilityReadOptions): Promise<ProviderAvailability[]>;
  /** How old the answer behind an unavailable verdict may be before it is checked again. */
  readonly recheckUnavailableMs: number;
  /** Milliseconds since the probe behind `availability` started (0 while checking). */
  ageMs(availability: ProviderAvailability): number;
}

/** DI token: the provider registry, as the engine and the services read it. */
export const ProviderCatalogToken = token<ProviderCatalog>("ProviderCatalog");
