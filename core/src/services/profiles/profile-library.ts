import { inject, injectable } from "tsyringe";
import { ConfigToken, type SwitchyardConfig } from "../../config/config-schema.js";
import { PathsToken, type SwitchyardPaths } from "../../config/paths.js";
import { readProfileCatalog } from "../../config/profiles/profile-catalog.js";
import type { ProfileCatalog, SourcedProfile } from "../../config/profiles/profile-source.js";
import { OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import { EngineToken, type Engine } from "../../engine/ports.js";
import type { InteractionMode, RuntimeMode } from "../../spec/index.js";
import type { Caller } from "../caller.js";
import { CallerContext } from "../caller-context.js";
import { ReachGrants } from "../reach/reach-grants.js";
import { applyProfile, type ProfiledWork, type ProfileShapedInput } from "./profile-application.js";

/**
 * The profiles a caller may delegate to: the user's config and the caller's project (its
 * thread's, or an outside session's work project). Project files are read on every call, so an
 * edited `.switchyard/agents/*.md` counts from the next delegation on.
 */
@injectable()
export class ProfileLibrary {
  constructor(
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
    @inject(PathsToken) private readonly paths: SwitchyardPaths,
    @inject(EngineToken) private readonly engine: Engine,
    private readonly callers: CallerContext,
    private readonly grants: ReachGrants,
  ) {}

  /** The caller's profiles; `projectId` names the project the work goes to (default the caller's). */
  async catalogFor(caller: Caller, projectId?: string): Promise<ProfileCatalog> {
    return await readProfileCatalog({
      config: { file: this.paths.configFile, profiles: this.config.profiles },
      projectRoot: await this.projectRoot(caller, projectId),
    });
  }

  /** The named profile, or `invalid_request` naming the ones the caller has. */
  async require(caller: Caller, name: string, projectId?: string): Promise<SourcedProfile> {
    // A linked environment learns only what its grant lists, never this machine's whole catalog.
    const granted = caller.kind === "environment" ? (caller.grant?.profiles ?? []) : null;
    return requireIn(await this.catalogFor(caller, projectId), name, granted);
  }

  /**
   * A project's profiles when no caller is there: a scheduled task's fire reads them for the
   * task's project (its `.switchyard/agents` and converted agents) and the user's config.
   */
  async catalogForProject(projectId: string): Promise<ProfileCatalog> {
    const project = await this.engine.reader.get("project", projectId);
    return readProfileCatalog({
      config: { file: this.paths.configFile, profiles: this.config.profiles },
      projectRoot: project === null || project.scratch ? null : project.rootPath,
    });
  }

  /**
   * The named profile (or none) applied to a request that starts work: the one path
   * delegate_task, create_threads, t3_thread_launch, scheduled launches and the HTTP API take.
   */
  async apply<I extends ProfileShapedInput>(
    caller: Caller,
    name: string | undefined,
    input: I,
    ceiling: { runtimeMode: RuntimeMode; interactionMode: InteractionMode },
    projectId?: string,
  ): Promise<ProfiledWork<I>> {
    // A linked environment names a profile; the definition is always this machine's own (its
    // config and projects), and only one its grant lists: a caller there never ships one here.
    if (name !== undefined && caller.kind === "environment") {
      if (caller.grant === undefined)
        throw new OrchestratorFailure(
          "capability_denied",
          `A call from another environment without a grant cannot name a profile ("${name}").`,
          {
            field: "profile",
            profile: name,
          },
        );
      this.grants.authorizeProfile(caller.grant, name);
    }
    return applyProfile(input, ceiling, name === undefined ? null : await this.require(caller, name, projectId));
  }

  private async projectRoot(caller: Caller, requested: string | undefined): Promise<string | null> {
    let projectId: string;
    try {
      projectId = (await this.callers.workProject(caller, requested)).projectId;
    } catch (error) {
      // A project named that the caller may not use is refused, never answered with another's list.
      if (requested !== undefined) throw error;
      return null; // A caller in no project has the config's profiles only.
    }
    const project = await this.engine.reader.get("project", projectId);
    return project === null || project.scratch ? null : project.rootPath;
  }
}

/** The named profile of a catalog, or `invalid_request` naming the ones it has. */
export function requireIn(
  catalog: ProfileCatalog,
  name: string,
  /** The only names a failure may list (a grant's), or null for the whole catalog. */
  shown: readonly string[] | null = null,
): SourcedProfile {
  const found = catalog.profiles.find((sourced) => sourced.profile.name === name);
  if (found !== undefined) return found;
  const available = catalog.profiles
    .map((sourced) => sourced.profile.name)
    .filter((profile) => shown === null || shown.includes(profile));
  throw new OrchestratorFailure(
    "invalid_request",
    `There is no profile "${name}". ${available.length === 0 ? "No profiles are defined (docs/profiles.md)." : `Available: ${available.map((n) => `"${n}"`).join(", ")} (orchestrator_capabilities describes them).`}`,
    { profile: name, availableProfiles: available },
  );
}
