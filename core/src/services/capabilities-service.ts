import { inject, injectable } from "tsyringe";
import { RUNTIME_MODES } from "../spec/index.js";
import { PolicyToken, type Policy } from "../policy/policy-token.js";
import { type SwitchyardConfig, ConfigToken } from "../config/config-schema.js";
import { type Engine, EngineToken } from "../engine/ports.js";
import { type ProviderCatalog, ProviderCatalogToken } from "../engine/provider-catalog.js";
import type { Caller } from "./caller.js";
import type { ProjectRecord } from "../store/records.js";
import { CallerContext } from "./caller-context.js";
import { shortModelList } from "./model-short-list.js";
import { ProfileOffers, type ProfileOffer } from "./profiles/profile-offers.js";
import { UsageService } from "./usage/usage-service.js";
import { WorkspacePlanner } from "./workspaces/workspace-planner.js";

/**
 * orchestrator_capabilities: what the caller inherits, and which providers (with a short,
 * context-friendly model list) can run a child task, and why not.
 */
@injectable()
export class CapabilitiesService {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ProviderCatalogToken) private readonly registry: ProviderCatalog,
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
    @inject(PolicyToken) private readonly policy: Policy,
    private readonly callers: CallerContext,
    private readonly usage: UsageService,
    private readonly workspaces: WorkspacePlanner,
    private readonly profiles: ProfileOffers,
  ) {}

  /** The profiles the caller may use for work in a project (default its own), as orchestrator_capabilities lists them. */
  async profilesFor(caller: Caller, projectId?: string) {
    return (await this.profiles.forCaller(caller, projectId)).map(profileEntry);
  }

  async describe(caller: Caller, input: { search?: string | undefined }) {
    const inherited = await this.callers.inherited(caller);
    const search = input.search?.trim().toLowerCase() ?? "";
    const providers = [];
    // The provider snapshot: never waits on a harness (at most a moment for a first check).
    for (const availability of await this.registry.snapshotAll()) {
      const capabilities = availability.capabilities;
      const shortList = shortModelList({
        catalog: availability.models,
        favorites: this.config.providers.find((p) => p.id === availability.instanceId)?.favoriteModels ?? [],
        callerModel: inherited?.providerInstanceId === availability.instanceId ? inherited.model : null,
        rule: capabilities.models.shortList,
        search,
      });
      const offersAllModes = RUNTIME_MODES.every((mode) => capabilities.runtimeModes.includes(mode));
      const constraints: string[] = [];
      if (!availability.enabled) constraints.push("disabled in the config");
      if (!availability.hasAdapter && availability.enabled)
        constraints.push("no orchestration adapter (the driver's plugin is missing or was refused)");
      if (availability.reason !== null && availability.hasAdapter) constraints.push(availability.reason);
      providers.push({
        providerInstanceId: availability.instanceId,
        driverKind: availability.driver,
        displayName: availability.displayName,
        canRunChildTasks: availability.available,
        constraints,
        models: shortList.models.map((m) => ({
          id: m.id,
          ...(m.custom ? { custom: true } : {}),
          ...(m.favorite ? { favorite: true } : {}),
          ...(m.legacy ? { legacy: true } : {}),
          ...(m.callerModel ? { callerModel: true } : {}),
          ...(m.efforts !== undefined && m.efforts.length > 0 ? { efforts: [...m.efforts] } : {}),
          ...(m.defaultEffort !== undefined ? { defaultEffort: m.defaultEffort } : {}),
        })),
        omittedModels: shortList.omitted,
        ...(offersAllModes ? {} : { runtimeModes: [...capabilities.runtimeModes] }),
        interactionModes: [...capabilities.interactionModes],
        // What the policy does here, answered by the decision functions themselves.
        ...this.policy.describeProviderConduct(capabilities),
      });
    }
    const thread = await this.callers.thread(caller);
    const profiles = await this.profiles.forCaller(caller);
    return {
      callerKind: caller.kind,
      inheritedProvider:
        inherited === null
          ? null
          : { providerInstanceId: inherited.providerInstanceId, model: inherited.model, effort: inherited.effort },
      parentModes:
        inherited === null ? null : { runtimeMode: inherited.runtimeMode, interactionMode: inherited.interactionMode },
      parentRunActive: (await this.callers.liveRun(caller)) !== null,
      projectId: thread?.projectId ?? null,
      projects: await Promise.all(
        (await this.usableProjects(caller)).map(async (p) => ({
          projectId: p.id,
          name: p.name,
          workspaces: await this.workspaces.strategies(p.id),
          defaultWorkspace: await this.workspaces.defaultFor(p.id),
        })),
      ),
      providers,
      // What a model needs to pick a profile; `switchyard profiles list` shows the rest.
      profiles: profiles.map(profileEntry),
      features: {
        polling: true,
        cancellation: true,
        batchThreadCreation: true,
        threadManagement: true,
        pendingRequests: true,
        worktreeLaunch: true,
        scheduling: true,
        workspaces: true,
      },
      limits: {
        maxWaitMs: this.config.server.maxWaitMs,
        maxDelegationDepth: this.config.budgets.maxDelegationDepth,
        maxConcurrentChildrenPerRun: this.config.budgets.maxConcurrentChildrenPerRun,
        maxTasksPerRootThread: this.config.budgets.maxTasksPerRootThread,
        maxThreadsPerCreate: 20,
        minScheduleIntervalMs: this.config.scheduling.minIntervalMs,
      },
      // The budgets in force: the config's defaults, and every budget covering the caller's tree.
      budgets: await this.usage.inForce(thread?.id ?? null),
    };
  }

  /** The projects the caller may use, oldest first. */
  private async usableProjects(caller: Caller): Promise<ProjectRecord[]> {
    const usable: ProjectRecord[] = [];
    for (const project of await this.engine.reader.select("project", "1 = 1", [], "ORDER BY created_at"))
      if (await this.callers.mayUseProject(caller, project.id)) usable.push(project);
    return usable;
  }
}

/** A profile as orchestrator_capabilities lists it: what a model needs to pick one; `switchyard profiles list` shows the rest. */
export function profileEntry({ sourced: { profile, source }, carriers, refusal }: ProfileOffer) {
  return {
    name: profile.name,
    description: profile.description,
    source: source.kind,
    ...(profile.target !== undefined ? { target: profile.target } : {}),
    ...(profile.maxRuntimeMode !== undefined ? { maxRuntimeMode: profile.maxRuntimeMode } : {}),
    ...(profile.maxInteractionMode !== undefined ? { maxInteractionMode: profile.maxInteractionMode } : {}),
    providers: carriers.map((carrier) => ({ ...carrier })),
    ...(refusal !== null ? { refusal } : {}),
  };
}
