import type { CommandGroup } from "../spec/index.js";

const GROUP_OR_COMMAND_NAME = /^[a-z][a-z0-9-]*$/;
const OPTION_NAME = /^[a-z][a-z0-9-]*$/;
const ARGUMENT_NAME = /^[a-zA-Z][a-zA-Z0-9-]*$/;
/** Options every contributed command gets from the host (or that commander owns). */
const HOST_OPTIONS: readonly string[] = ["home", "help"];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describeName(value: unknown): string {
  return typeof value === "string" ? `"${value}"` : (JSON.stringify(value) ?? String(value));
}

/** Why one command of a group is malformed, or null. */
function commandProblem(command: unknown): string | null {
  if (!isRecord(command)) return "is not an object";
  if (typeof command.name !== "string" || !GROUP_OR_COMMAND_NAME.test(command.name))
    return `has name ${describeName(command.name)} (expected lowercase [a-z0-9-], starting with a letter)`;
  if (typeof command.description !== "string" || command.description.trim() === "") return "has no description";
  if (typeof command.run !== "function") return "has no run()";
  const args = command.arguments ?? [];
  if (!Array.isArray(args)) return "has arguments that are not an array";
  let optionalSeen = false;
  const argNames = new Set<string>();
  for (const [index, arg] of args.entries()) {
    if (!isRecord(arg) || typeof arg.name !== "string" || !ARGUMENT_NAME.test(arg.name))
      return `argument ${index + 1} has no valid name (expected [a-zA-Z][a-zA-Z0-9-]*)`;
    if (argNames.has(arg.name)) return `argument "${arg.name}" is declared twice`;
    argNames.add(arg.name);
    if (arg.variadic === true && index !== args.length - 1)
      return `argument "${arg.name}" is variadic but not the last one`;
    const required = arg.required !== false;
    if (required && optionalSeen) return `argument "${arg.name}" is required but follows an optional one`;
    if (!required) optionalSeen = true;
  }
  const options = command.options ?? [];
  if (!Array.isArray(options)) return "has options that are not an array";
  const optionNames = new Set<string>();
  for (const [index, option] of options.entries()) {
    if (!isRecord(option) || typeof option.name !== "string" || !OPTION_NAME.test(option.name))
      return `option ${index + 1} has no valid name (expected lowercase [a-z0-9-], starting with a letter)`;
    if (HOST_OPTIONS.includes(option.name)) return `option "--${option.name}" belongs to the host`;
    if (optionNames.has(option.name)) return `option "--${option.name}" is declared twice`;
    optionNames.add(option.name);
    if (typeof option.description !== "string" || option.description.trim() === "")
      return `option "--${option.name}" has no description`;
    if (
      option.valueName !== undefined &&
      (typeof option.valueName !== "string" || !ARGUMENT_NAME.test(option.valueName))
    )
      return `option "--${option.name}" has an invalid valueName`;
  }
  return null;
}

/**
 * Checks a definition's `commands` against the manifest's list: every group well formed and
 * listed, every listed group defined. Returns the groups, or what is wrong in words that name
 * the group and the command.
 */
export function checkCommandGroups(
  value: unknown,
  declared: readonly string[],
): { groups: CommandGroup[] } | { problem: string } {
  if (value === undefined) {
    return declared.length === 0
      ? { groups: [] }
      : { problem: `its manifest lists command "${declared[0]}" but its definition has no commands` };
  }
  if (!Array.isArray(value)) return { problem: "its definition's commands is not an array" };
  const groups: CommandGroup[] = [];
  for (const group of value as unknown[]) {
    if (!isRecord(group) || typeof group.name !== "string" || !GROUP_OR_COMMAND_NAME.test(group.name)) {
      return {
        problem: `a command group has name ${describeName(isRecord(group) ? group.name : group)} (expected lowercase [a-z0-9-], starting with a letter)`,
      };
    }
    const where = `command group "${group.name}"`;
    if (!declared.includes(group.name))
      return { problem: `${where} is not listed in the manifest's commands (${declared.join(", ") || "none"})` };
    if (groups.some((seen) => seen.name === group.name)) return { problem: `${where} is defined twice` };
    if (typeof group.description !== "string" || group.description.trim() === "")
      return { problem: `${where} has no description` };
    if (!Array.isArray(group.commands) || group.commands.length === 0) return { problem: `${where} has no commands` };
    const names = new Set<string>();
    for (const command of group.commands as unknown[]) {
      const problem = commandProblem(command);
      const name = isRecord(command) && typeof command.name === "string" ? command.name : "?";
      if (problem !== null) return { problem: `${where}: command "${name}" ${problem}` };
      if (names.has(name)) return { problem: `${where}: command "${name}" is defined twice` };
      names.add(name);
    }
    groups.push(group as unknown as CommandGroup);
  }
  const missing = declared.find((name) => !groups.some((group) => group.name === name));
  if (missing !== undefined)
    return { problem: `its manifest lists command "${missing}" but its definition does not define it` };
  return { groups };
}
