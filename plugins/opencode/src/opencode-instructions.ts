/** The tag that carries a turn's instructions inside its prompt (OpenCode keeps no per-turn system prompt). */
export const INSTRUCTIONS_TAG = "switchyard_instructions";

/**
 * Puts a turn's instructions (a role instruction, portable context) first in its prompt, inside
 * `<switchyard_instructions>…</switchyard_instructions>`: OpenCode's per-prompt `system` applies
 * to that prompt's requests only, while the prompt stays in the conversation for later turns.
 */
export function withInstructions(text: string, instructions: string | null): string {
  const trimmed = instructions?.trim() ?? "";
  return trimmed === "" ? text : `<${INSTRUCTIONS_TAG}>\n${trimmed}\n</${INSTRUCTIONS_TAG}>\n\n${text}`;
}

/** The user's own text of a prompt built by {@link withInstructions}. */
export function withoutInstructions(text: string): string {
  return text.replace(new RegExp(`^<${INSTRUCTIONS_TAG}>[\\s\\S]*?</${INSTRUCTIONS_TAG}>\\s*`), "");
}
