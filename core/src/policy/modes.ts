import {
  INTERACTION_MODES,
  interactionModeRank,
  runtimeModeRank,
  type InteractionMode,
  type ProviderCapabilities,
  type RuntimeMode,
} from "../spec/index.js";

/** Why a mode request was refused (seed 000 failure codes, plus an unsupported mode). */
export type ModeRefusalCode =
  "runtime_mode_escalation_denied" | "interaction_mode_escalation_denied" | "invalid_request";

/** Input to {@link resolveModes}. */
export interface ModeQuery {
  /** The caller's modes: the ceiling. */
  readonly ceiling: { readonly runtimeMode: RuntimeMode; readonly interactionMode: InteractionMode };
  readonly requestedRuntimeMode?: RuntimeMode | "inherit" | undefined;
  readonly requestedInteractionMode?: InteractionMode | "inherit" | undefined;
  /** The target provider's capabilities (which modes it offers). */
  readonly target: ProviderCapabilities;
  /** The target provider's name, for messages. */
  readonly targetName: string;
}

/** The resolved modes and what happened to them. */
export type ModeDecision =
  | {
      readonly ok: true;
      readonly runtimeMode: RuntimeMode;
      readonly interactionMode: InteractionMode;
      /** The inherited runtime mode was narrowed to one the provider offers. */
      readonly steppedDown: boolean;
      readonly notes: readonly string[];
    }
  | { readonly ok: false; readonly code: ModeRefusalCode; readonly reason: string };

/**
 * Applies the privilege ceiling: a child or target may stay at or below the caller's runtime
 * and interaction modes, never above. An explicit mode the provider does not offer is refused;
 * an inherited one steps down to the broadest mode the provider offers.
 */
export function resolveModes(query: ModeQuery): ModeDecision {
  const notes: string[] = [];
  const offered = query.target.runtimeModes;
  const ceilingRank = runtimeModeRank(query.ceiling.runtimeMode);
  let runtimeMode: RuntimeMode;
  let steppedDown = false;
  const explicitRuntime = query.requestedRuntimeMode !== undefined && query.requestedRuntimeMode !== "inherit";
  if (explicitRuntime) {
    const requested = query.requestedRuntimeMode as RuntimeMode;
    if (runtimeModeRank(requested) > ceilingRank) {
      return {
        ok: false,
        code: "runtime_mode_escalation_denied",
        reason: `Runtime mode "${requested}" is broader than the caller's "${query.ceiling.runtimeMode}"; use "${query.ceiling.runtimeMode}" or narrower.`,
      };
    }
    if (!offered.includes(requested)) {
      return {
        ok: false,
        code: "invalid_request",
        reason: `Provider "${query.targetName}" does not offer runtime mode "${requested}"; it offers ${offered.map((m) => `"${m}"`).join(", ")}.`,
      };
    }
    runtimeMode = requested;
  } else {
    const candidates = offered.filter((mode) => runtimeModeRank(mode) <= ceilingRank);
    if (candidates.length === 0) {
      return {
        ok: false,
        code: "invalid_request",
        reason: `Provider "${query.targetName}" offers no runtime mode at or below the caller's "${query.ceiling.runtimeMode}" (it offers ${offered.join(", ")}).`,
      };
    }
    runtimeMode = candidates[candidates.length - 1]!;
    if (runtimeMode !== query.ceiling.runtimeMode) {
      steppedDown = true;
      notes.push(
        `Runtime mode stepped down from "${query.ceiling.runtimeMode}" to "${runtimeMode}", the broadest mode "${query.targetName}" offers.`,
      );
    }
  }

  let interactionMode: InteractionMode;
  const explicitInteraction =
    query.requestedInteractionMode !== undefined && query.requestedInteractionMode !== "inherit";
  const interactionCeiling = interactionModeRank(query.ceiling.interactionMode);
  if (explicitInteraction) {
    const requested = query.requestedInteractionMode as InteractionMode;
    if (interactionModeRank(requested) > interactionCeiling) {
      return {
        ok: false,
        code: "interaction_mode_escalation_denied",
        reason: `Interaction mode "${requested}" is broader than the caller's "${query.ceiling.interactionMode}"; a plan-mode caller can only start plan-mode work.`,
      };
    }
    interactionMode = requested;
  } else {
    interactionMode = query.ceiling.interactionMode;
  }
  if (!query.target.interactionModes.includes(interactionMode)) {
    const narrower = INTERACTION_MODES.filter(
      (m) =>
        interactionModeRank(m) <= interactionModeRank(interactionMode) && query.target.interactionModes.includes(m),
    );
    if (explicitInteraction || narrower.length === 0) {
      return {
        ok: false,
        code: "invalid_request",
        reason: `Provider "${query.targetName}" does not offer interaction mode "${interactionMode}"; it offers ${query.target.interactionModes.join(", ")}.`,
      };
    }
    const chosen = narrower[narrower.length - 1]!;
    notes.push(`Interaction mode stepped down from "${interactionMode}" to "${chosen}".`);
    interactionMode = chosen;
  }
  return { ok: true, runtimeMode, interactionMode, steppedDown, notes };
}
