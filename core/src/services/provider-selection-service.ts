import { inject, injectable } from "tsyringe";
import type { InteractionMode, ProviderCapabilities, RuntimeMode } from "../spec/index.js";
import { PolicyToken, type Policy } from "../policy/policy-token.js";
import { OrchestratorFailure } from "../engine/orchestrator-failure.js";
import { type ProviderAvailability, type ProviderCatalog, ProviderCatalogToken } from "../engine/provider-catalog.js";

/** A requested target (seed 000 `target`). */
export interface TargetRequest {
  readonly providerInstanceId?: string | undefined;
  readonly driverKind?: string | undefined;
  readonly model?: string | undefined;
  /** A reasoning effort the model lists (`ModelDescriptor.efforts`); omitted inherits with the model, else the provider's default. */
  readonly effort?: string | undefined;
}

/** What the new work inherits from (the caller's thread), or null for client callers. */
export interface InheritedSelection {
  readonly providerInstanceId: string;
  readonly model: string | null;
  readonly effort: string | null;
  readonly runtimeMode: RuntimeMode;
  readonly interactionMode: InteractionMode;
}

/** The resolved provider, model and modes for new work, and notes on what was stepped down. */
export interface ResolvedSelection {
  readonly providerInstanceId: string;
  readonly driverKind: string;
  readonly model: string | null;
  /** The reasoning effort, or null for the provider's default. */
  readonly effort: string | null;
  readonly runtimeMode: RuntimeMode;
  readonly interactionMode: InteractionMode;
  readonly capabilities: ProviderCapabilities;
  readonly notes: readonly string[];
}

/** The ceiling for a client caller (an operator's own tool): nothing above the broadest modes. */
export const CLIENT_CEILING = { runtimeMode: "full-access", interactionMode: "default" } as const;

/**
 * Resolves provider instance, model and modes for new work (delegate_task, create_threads,
 * t3_thread_launch) with one set of rules: inherit when omitted, honour an explicit instance
 * exactly, pick an available instance for a driver-only target, require advertised models,
 * and never exceed the caller's modes.
 */
@injectable()
export class ProviderSelectionService {
  constructor(
    @inject(ProviderCatalogToken) private readonly registry: ProviderCatalog,
    @inject(PolicyToken) private readonly policy: Policy,
  ) {}

  /**
   * Why an instance cannot run work, or null when it can. Reads the provider snapshot that
   * orchestrator_capabilities shows (waiting for a full check when there is none yet), and
   * checks again before refusing on a verdict older than a few seconds, so work is never
   * accepted for a provider known to be unavailable nor refused for a stale reason.
   */
  async unavailableReason(
    instanceId: string,
  ): Promise<{ reason: string; availability: ProviderAvailability | null } | null> {
    let availability = await this.registry.availability(instanceId);
    if (availability === null)
      return { reason: `Provider instance "${instanceId}" is not configured.`, availability: null };
    if (availability.available) return null;
    if (availability.hasAdapter && this.registry.ageMs(availability) >= this.registry.recheckUnavailableMs) {
      availability = (await this.registry.availability(instanceId, { refresh: true }))!;
      if (availability.available) return null;
    }
    return { reason: availability.reason ?? `Provider instance "${instanceId}" is unavailable.`, availability };
  }

  async resolve(options: {
    target: TargetRequest | undefined;
    inherited: InheritedSelection | null;
    ceiling: { runtimeMode: RuntimeMode; interactionMode: InteractionMode };
    runtimeMode?: RuntimeMode | "inherit" | undefined;
    interactionMode?: InteractionMode | "inherit" | undefined;
  }): Promise<ResolvedSelection> {
    const target = options.target ?? {};
    const instanceId = await this.pickInstance(target, options.inherited);
    const refusal = await this.unavailableReason(instanceId);
    if (refusal !== null) {
      throw new OrchestratorFailure(
        "provider_unavailable",
        `${refusal.reason} Call orchestrator_capabilities to see which providers can run work.`,
        { providerInstanceId: instanceId },
      );
    }
    const availability = (await this.registry.availability(instanceId))!;
    const model = this.pickModel(target.model, availability, options.inherited);
    const effort = this.pickEffort(target.effort, model, availability, options.inherited);
    const capabilities = this.registry.capabilities(instanceId);
    const modes = this.policy.resolveModes({
      ceiling: options.ceiling,
      requestedRuntimeMode: options.runtimeMode,
      requestedInteractionMode: options.interactionMode,
      target: capabilities,
      targetName: instanceId,
    });
    if (!modes.ok) throw new OrchestratorFailure(modes.code, modes.reason, { providerInstanceId: instanceId });
    return {
      providerInstanceId: instanceId,
      driverKind: availability.driver,
      model,
      effort,
      runtimeMode: modes.runtimeMode,
      interactionMode: modes.interactionMode,
      capabilities,
      notes: modes.notes,
    };
  }

  private async pickInstance(target: TargetRequest, inherited: InheritedSelection | null): Promise<string> {
    if (target.providerInstanceId !== undefined) {
      const instance = this.registry.get(target.providerInstanceId);
      if (instance === null) {
        throw new OrchestratorFailure(
          "provider_unavailable",
          `Provider instance "${target.providerInstanceId}" is not configured. Call orchestrator_capabilities for the configured instances.`,
          {
            providerInstanceId: target.providerInstanceId,
          },
        );
      }
      if (target.driverKind !== undefined && instance.descriptor.driver !== target.driverKind) {
        throw new OrchestratorFailure(
          "invalid_request",
          `Provider instance "${target.providerInstanceId}" uses driver "${instance.descriptor.driver}", not "${target.driverKind}".`,
        );
      }
      return target.providerInstanceId;
    }
    if (target.driverKind !== undefined) {
      if (inherited !== null) {
        const parent = this.registry.get(inherited.providerInstanceId);
        if (
          parent?.descriptor.driver === target.driverKind &&
          (await this.unavailableReason(inherited.providerInstanceId)) === null
        )
          return inherited.providerInstanceId;
      }
      const candidates = this.registry.list().filter((instance) => instance.descriptor.driver === target.driverKind);
      if (candidates.length === 0) {
        throw new OrchestratorFailure(
          "provider_unavailable",
          `No provider instance uses driver "${target.driverKind}". Call orchestrator_capabilities for the configured instances.`,
          {
            driverKind: target.driverKind,
          },
        );
      }
      for (const candidate of candidates)
        if ((await this.unavailableReason(candidate.descriptor.id)) === null) return candidate.descriptor.id;
      const reason = (await this.unavailableReason(candidates[0]!.descriptor.id))?.reason ?? "unavailable";
      throw new OrchestratorFailure(
        "provider_unavailable",
        `No available instance of driver "${target.driverKind}": ${reason}`,
        { driverKind: target.driverKind },
      );
    }
    if (inherited !== null) return inherited.providerInstanceId;
    const first = this.registry.list()[0];
    if (first === undefined)
      throw new OrchestratorFailure(
        "provider_unavailable",
        "No provider instances are configured. Add one to config.json (providers).",
      );
    throw new OrchestratorFailure(
      "invalid_request",
      "A client caller must name a target provider (target.providerInstanceId or target.driverKind).",
    );
  }

  private pickModel(
    requested: string | undefined,
    availability: ProviderAvailability,
    inherited: InheritedSelection | null,
  ): string | null {
    const advertised = availability.models.map((m) => m.id);
    if (requested !== undefined) {
      if (advertised.length > 0 && !advertised.includes(requested)) {
        throw new OrchestratorFailure(
          "model_unavailable",
          `Provider "${availability.instanceId}" does not advertise model "${requested}". Call orchestrator_capabilities (with search) to find its models.`,
          { providerInstanceId: availability.instanceId, model: requested },
        );
      }
      return requested;
    }
    if (inherited !== null && inherited.providerInstanceId === availability.instanceId) return inherited.model;
    // The provider's own default (what its harness is configured to use: Codex's config.toml
    // `model`, Pi's settings.json, an ACP session's current model), else the first it lists.
    const listed = availability.status?.models ?? [];
    const preferred = (listed.find((model) => model.isDefault === true) ?? listed[0])?.id;
    return preferred ?? advertised[0] ?? null;
  }

  /**
   * The effort new work runs with. An explicit one must be among the efforts the chosen model
   * lists (capability data from the provider's model catalog: the host never guesses what a
   * provider calls its levels); omitted, it inherits the caller's when the model is inherited
   * too, else the provider's default (null).
   */
  private pickEffort(
    requested: string | undefined,
    model: string | null,
    availability: ProviderAvailability,
    inherited: InheritedSelection | null,
  ): string | null {
    const descriptor = model === null ? undefined : availability.models.find((candidate) => candidate.id === model);
    const supported = descriptor?.efforts ?? [];
    if (requested !== undefined) {
      if (!supported.includes(requested)) {
        const which =
          model === null
            ? `Provider "${availability.instanceId}" names no model`
            : `Model "${model}" of provider "${availability.instanceId}"`;
        const offer =
          supported.length === 0
            ? "takes no effort setting; omit effort"
            : `supports effort ${supported.map((effort) => `"${effort}"`).join(", ")}`;
        throw new OrchestratorFailure(
          "invalid_request",
          `${which} ${offer}, not "${requested}". orchestrator_capabilities lists each model's efforts.`,
          {
            providerInstanceId: availability.instanceId,
            model,
            effort: requested,
            supportedEfforts: [...supported],
          },
        );
      }
      return requested;
    }
    if (
      inherited !== null &&
      inherited.providerInstanceId === availability.instanceId &&
      inherited.model === model &&
      inherited.effort !== null &&
      supported.includes(inherited.effort)
    )
      return inherited.effort;
    return null;
  }
}
