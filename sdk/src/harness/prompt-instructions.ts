/** The tag that carries instructions inside a prompt, for harnesses without an instruction channel. */
export const INSTRUCTIONS_TAG = "switchyard_instructions";

/**
 * Puts instructions (a role instruction, portable context) first in a prompt, inside
 * `<switchyard_instructions>…</switchyard_instructions>`, so they stay in the conversation and a
 * reader can tell them from what the user typed. Empty parts are dropped; with none left the
 * text is returned unchanged.
 */
export function withInstructions(text: string, instructions: readonly (string | null | undefined)[]): string {
  const parts = instructions.map((part) => part?.trim() ?? "").filter((part) => part.length > 0);
  if (parts.length === 0) return text;
  return `<${INSTRUCTIONS_TAG}>\n${parts.join("\n\n")}\n</${INSTRUCTIONS_TAG}>\n\n${text}`;
}
