/**
 * Runtime modes, narrowest first: how much a provider may do without asking.
 * - `approval-required`: every command and edit asks first.
 * - `auto-accept-edits`: file edits run; commands still ask.
 * - `full-access`: nothing asks.
 * @public
 */
export const RUNTIME_MODES = ["approval-required", "auto-accept-edits", "full-access"] as const;

/** One of {@link RUNTIME_MODES}. @public */
export type RuntimeMode = (typeof RUNTIME_MODES)[number];

/**
 * Interaction modes, narrowest first. `plan` only proposes; `default` also acts.
 * @public
 */
export const INTERACTION_MODES = ["plan", "default"] as const;

/** One of {@link INTERACTION_MODES}. @public */
export type InteractionMode = (typeof INTERACTION_MODES)[number];

/** Position of a runtime mode in {@link RUNTIME_MODES}: a larger rank grants more. @public */
export function runtimeModeRank(mode: RuntimeMode): number {
  return RUNTIME_MODES.indexOf(mode);
}

/** Position of an interaction mode in {@link INTERACTION_MODES}: a larger rank grants more. @public */
export function interactionModeRank(mode: InteractionMode): number {
  return INTERACTION_MODES.indexOf(mode);
}

/** True when `value` names a runtime mode. @public */
export function isRuntimeMode(value: unknown): value is RuntimeMode {
  return typeof value === "string" && (RUNTIME_MODES as readonly string[]).includes(value);
}

/** True when `value` names an interaction mode. @public */
export function isInteractionMode(value: unknown): value is InteractionMode {
  return typeof value === "string" && (INTERACTION_MODES as readonly string[]).includes(value);
}
