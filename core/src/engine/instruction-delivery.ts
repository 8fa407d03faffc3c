/** The tag that carries instructions inside a prompt, for providers without an instruction channel. */
export const INSTRUCTIONS_TAG = "switchyard_instructions";

/** Instructions and text as one provider turn receives them. */
export interface DeliveredTurnText {
  readonly text: string;
  readonly instructions: string | null;
}

/**
 * The one way instructions reach a model. The host composes every instruction a turn carries
 * (the orchestration instructions on the first turn of a new conversation, a history handoff, a
 * role instruction, portable context) into `TurnInput.instructions`, in that order. A provider
 * that declares `context.acceptsInstructions` gets them there and puts them on its instruction
 * channel; for any other provider the host folds them into the prompt, wrapped in
 * `<switchyard_instructions>` tags, and passes `instructions: null`. So no adapter folds, and
 * the model sees each instruction exactly once.
 */
export function deliverInstructions(
  text: string,
  parts: readonly (string | null | undefined)[],
  acceptsInstructions: boolean,
): DeliveredTurnText {
  const kept = parts.map((part) => part?.trim() ?? "").filter((part) => part !== "");
  if (kept.length === 0) return { text, instructions: null };
  const instructions = kept.join("\n\n");
  if (acceptsInstructions) return { text, instructions };
  return { text: `<${INSTRUCTIONS_TAG}>\n${instructions}\n</${INSTRUCTIONS_TAG}>\n\n${text}`, instructions: null };
}
