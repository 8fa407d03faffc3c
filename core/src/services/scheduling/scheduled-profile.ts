import { injectable } from "tsyringe";
import { OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import type { BudgetLimits, ScheduledTaskRecord, ThreadHarness, ThreadProfile } from "../../store/records.js";
import { applyProfile, rootThreadBudget } from "../profiles/profile-application.js";
import { checkProfileSupport } from "../profiles/profile-harness.js";
import { ProfileLibrary, requireIn } from "../profiles/profile-library.js";
import { ProviderSelectionService, type ResolvedSelection } from "../provider-selection-service.js";
import { ReachGrants } from "../reach/reach-grants.js";

/** A scheduled task's profile as one fire runs it: where the run goes, its instructions, and what its thread records. */
export interface ProfiledFire {
  readonly ok: true;
  readonly selection: ResolvedSelection;
  readonly instructions: string | null;
  readonly stamp: ThreadProfile | null;
  readonly harness: ThreadHarness | null;
  /** The limits the profile puts on the run's thread's tree (a top-level thread), or null. */
  readonly budget: BudgetLimits | null;
}

/** Why a fire cannot run with the task's profile: recorded as the trigger's failure, never run without it. */
export interface RefusedFire {
  readonly ok: false;
  readonly reason: "profile_not_found" | "profile_refused" | "profile_not_granted" | "provider_unavailable";
  readonly detail: string;
}

/**
 * A scheduled task's profile, resolved again at each fire: the task stores it by name, and the
 * user may edit or remove it between fires. The fire goes through the same shared code as
 * `schedule_task` and every other entry point (`applyProfile`, the provider selection, the
 * policy's `checkProfileSupport`), with the task's creator ceiling as the caller's, its stored
 * modes and target fields as the explicit ones: so a profile that was removed, that no longer
 * allows the modes the task runs in, that now sets what only config.json may, or that the
 * provider can no longer carry, fails the fire with the reason; it never runs without it.
 */
@injectable()
export class ScheduledProfileResolver {
  constructor(
    private readonly library: ProfileLibrary,
    private readonly selection: ProviderSelectionService,
    private readonly grants: ReachGrants,
  ) {}

  async atFire(task: ScheduledTaskRecord): Promise<ProfiledFire | RefusedFire> {
    const wanted = task.profile!;
    const fix = `Restore it, or change the task's profile (schedule_task with scheduledTaskId and profile, or profile: null to run without one).`;
    const notGranted = await this.notGranted(task, wanted.name);
    if (notGranted !== null) return notGranted;
    let sourced;
    try {
      sourced = requireIn(await this.library.catalogForProject(task.projectId), wanted.name);
    } catch (error) {
      if (!(error instanceof OrchestratorFailure)) throw error;
      return {
        ok: false,
        reason: "profile_not_found",
        detail: `The task's profile "${wanted.name}" no longer exists, so this run did not start. ${error.message.replace(/^There is no profile "[^"]*"\. /, "")} ${fix}`,
      };
    }
    try {
      const profiled = applyProfile(
        { target: wanted.target ?? undefined, runtimeMode: task.runtimeMode, interactionMode: task.interactionMode },
        task.creatorCeiling,
        sourced,
      );
      // What the profile leaves open stays as the task resolved it when it was made.
      const selection = await this.selection.resolve({
        target: profiled.input.target,
        inherited: {
          providerInstanceId: task.providerInstanceId,
          model: task.model,
          effort: task.effort ?? null,
          runtimeMode: task.runtimeMode,
          interactionMode: task.interactionMode,
        },
        ceiling: profiled.ceiling,
        runtimeMode: task.runtimeMode,
        interactionMode: task.interactionMode,
      });
      const supported = checkProfileSupport(profiled.harness, wanted.name, selection);
      return {
        ok: true,
        selection,
        instructions: profiled.instructions,
        stamp: profiled.stamp,
        harness: supported.harness,
        budget: rootThreadBudget(profiled),
      };
    } catch (error) {
      if (!(error instanceof OrchestratorFailure)) throw error;
      if (error.code === "provider_unavailable")
        return { ok: false, reason: "provider_unavailable", detail: error.message };
      return {
        ok: false,
        reason: "profile_refused",
        detail: `The task's profile "${wanted.name}", as it is now, cannot run this task (${error.code}), so this run did not start: ${error.message} ${fix}`,
      };
    }
  }

  /**
   * A task that runs under a grant (work a linked environment started made it, or resumed it)
   * runs only with a profile that grant lists, held at every fire as a call from that
   * environment is. A grant that is gone, revoked or expired is not judged here: the fire's
   * standing check pauses the task for it.
   */
  private async notGranted(task: ScheduledTaskRecord, profile: string): Promise<RefusedFire | null> {
    if (task.authority?.kind !== "grant") return null;
    const grant = await this.grants.get(task.authority.grantId);
    if (grant === null || grant.profiles.includes(profile)) return null;
    return {
      ok: false,
      reason: "profile_not_granted",
      detail: `The task runs under grant ${grant.id} (for ${grant.for}), which does not allow profile "${profile}"${grant.profiles.length === 0 ? " (it allows none)" : ` (it allows ${grant.profiles.map((name) => `"${name}"`).join(", ")})`}, so this run did not start. Change the task's profile to one the grant lists (or profile: null), or ask the user on this machine for a grant that includes it.`,
    };
  }
}
