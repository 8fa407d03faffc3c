import type { TreeBudgetConfig } from "../../config/config-schema.js";
import type { SourcedProfile } from "../../config/profiles/profile-source.js";
import { OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import { interactionModeRank, runtimeModeRank, type InteractionMode, type RuntimeMode } from "../../spec/index.js";
import type { BudgetLimits, ThreadHarness, ThreadProfile } from "../../store/records.js";
import type { TargetRequest } from "../provider-selection-service.js";
import { hasLimits, limitsOf } from "../usage/budget-scopes.js";
import type { WorkspaceChoice } from "../workspaces/workspace-planner.js";
import { profileHarness } from "./profile-harness.js";

type Ceiling = { runtimeMode: RuntimeMode; interactionMode: InteractionMode };

/**
 * The fields of a request that starts work (delegate_task, a create_threads entry,
 * t3_thread_launch, a scheduled task's launch) that a profile shapes.
 */
export interface ProfileShapedInput {
  readonly target?: TargetRequest | undefined;
  readonly runtimeMode?: RuntimeMode | "inherit" | undefined;
  readonly interactionMode?: InteractionMode | "inherit" | undefined;
  readonly budget?: TreeBudgetConfig | undefined;
  readonly workspace?: WorkspaceChoice | undefined;
}

/** A request as its profile shapes it: the input with the profile's defaults, and the lowered ceiling. */
export interface ProfiledWork<I extends ProfileShapedInput> {
  readonly input: I;
  readonly ceiling: Ceiling;
  /** The instructions the child gets with its task (the profile's), or null. */
  readonly instructions: string | null;
  /** What the child's thread records. */
  readonly stamp: ThreadProfile | null;
  /** What the profile asks of the child's harness sessions (checked against the provider later). */
  readonly harness: ThreadHarness | null;
  /** The profile's own limits and workspace default, for an entry point whose input has no such field. */
  readonly profileBudget: TreeBudgetConfig | undefined;
  readonly profileWorkspace: "shared" | "worktree" | "scratch" | undefined;
}

/**
 * Applies a profile to a request that starts work: every entry point goes through here. The profile supplies the target, instructions,
 * workspace and budget, and lowers the caller's mode ceiling to its own; the call's explicit
 * fields may narrow what the profile sets, never widen or replace it: a broader mode or budget,
 * or another provider, model or effort than the profile's, is refused naming the field.
 */
export function applyProfile<I extends ProfileShapedInput>(
  input: I,
  callerCeiling: Ceiling,
  sourced: SourcedProfile | null,
): ProfiledWork<I> {
  if (sourced === null)
    return {
      input,
      ceiling: callerCeiling,
      instructions: null,
      stamp: null,
      harness: null,
      profileBudget: undefined,
      profileWorkspace: undefined,
    };
  const { profile, source } = sourced;
  // The trust rule first: a project file that sets a harness home, environment or MCP server is refused.
  const harness = profileHarness(sourced);
  const ceiling: Ceiling = {
    runtimeMode: lower(callerCeiling.runtimeMode, profile.maxRuntimeMode, runtimeModeRank),
    interactionMode: lower(callerCeiling.interactionMode, profile.maxInteractionMode, interactionModeRank),
  };
  refuseWider("runtimeMode", profile.name, input.runtimeMode, profile.maxRuntimeMode, runtimeModeRank);
  refuseWider("interactionMode", profile.name, input.interactionMode, profile.maxInteractionMode, interactionModeRank);
  const target = mergeTarget(profile.name, profile.target ?? {}, input.target);
  const budget = mergeBudget(profile.name, profile.budget, input.budget);
  const workspace = input.workspace ?? profile.workspace;
  return {
    input: {
      ...input,
      ...(target !== undefined ? { target } : {}),
      ...(budget !== undefined ? { budget } : {}),
      ...(workspace !== undefined ? { workspace } : {}),
    },
    ceiling,
    instructions: profile.instructions ?? null,
    stamp: { name: profile.name, source: source.kind, file: source.file, version: source.version },
    harness,
    profileBudget: profile.budget,
    profileWorkspace: profile.workspace,
  };
}

/** An explicit mode broader than the profile's limit is refused (`<field>_escalation_denied`), never lowered. */
function refuseWider<M extends string>(
  field: "runtimeMode" | "interactionMode",
  profileName: string,
  requested: M | "inherit" | undefined,
  limit: M | undefined,
  rank: (mode: M) => number,
): void {
  if (limit === undefined || requested === undefined || requested === "inherit" || rank(requested) <= rank(limit))
    return;
  throw new OrchestratorFailure(
    field === "runtimeMode" ? "runtime_mode_escalation_denied" : "interaction_mode_escalation_denied",
    `${field} "${requested}" is broader than profile "${profileName}" allows ("${limit}"); omit ${field} or pass a narrower one.`,
    { field, profile: profileName, limit },
  );
}

function lower<M extends string>(caller: M, profile: M | undefined, rank: (mode: M) => number): M {
  return profile !== undefined && rank(profile) < rank(caller) ? profile : caller;
}

/** The profile's target with the call's fields added; a field the profile sets cannot change. */
function mergeTarget(
  profileName: string,
  fixed: TargetRequest,
  requested: TargetRequest | undefined,
): TargetRequest | undefined {
  for (const field of ["providerInstanceId", "driverKind", "model", "effort"] as const) {
    const mine = fixed[field];
    const theirs = requested?.[field];
    if (mine !== undefined && theirs !== undefined && mine !== theirs)
      throw new OrchestratorFailure(
        "invalid_request",
        `target.${field} "${theirs}" differs from profile "${profileName}"'s "${mine}"; omit target.${field} or do without the profile.`,
        { field: `target.${field}`, profile: profileName, profileValue: mine },
      );
  }
  const merged = { ...fixed, ...requested };
  return Object.keys(merged).length === 0 ? undefined : merged;
}

/** The profile's budget tightened by the call's; a looser limit than the profile's is refused. */
function mergeBudget(
  profileName: string,
  fixed: TreeBudgetConfig | undefined,
  requested: TreeBudgetConfig | undefined,
): TreeBudgetConfig | undefined {
  if (fixed === undefined) return requested;
  for (const field of ["tokens", "costUsd", "wallClockMs"] as const) {
    const limit = fixed[field];
    const asked = requested?.[field];
    if (limit !== undefined && asked !== undefined && asked > limit)
      throw new OrchestratorFailure(
        "invalid_request",
        `budget.${field} ${asked} is more than profile "${profileName}" allows (${limit}); pass at most ${limit} or omit it.`,
        { field: `budget.${field}`, profile: profileName, limit },
      );
  }
  return { ...fixed, ...requested };
}

/**
 * The limits a profile puts on a top-level thread's whole tree, kept on the thread's record
 * (`ThreadRecord.profileBudget`, read by the root thread's budget), or null when it sets none.
 */
export function rootThreadBudget(profiled: ProfiledWork<ProfileShapedInput>): BudgetLimits | null {
  const budget = profiled.stamp === null ? undefined : profiled.input.budget;
  if (budget === undefined) return null;
  const limits = limitsOf(budget);
  return hasLimits(limits) ? limits : null;
}

/**
 * What a profile asks that a router child (a `create_threads` entry with `parentThreadId`)
 * cannot carry, said in the result's notes: the child is part of its parent's tree, under
 * that tree's root budget, and has no budget of its own.
 */
export function routerChildProfileNotes(profiled: ProfiledWork<ProfileShapedInput>): string[] {
  if (profiled.stamp === null || rootThreadBudget(profiled) === null) return [];
  return [
    `Profile "${profiled.stamp.name}"'s budget is not applied to a router child: it runs under its root thread's budget.`,
  ];
}
