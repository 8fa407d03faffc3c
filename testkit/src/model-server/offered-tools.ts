import type { JsonSchema, OfferedTool } from "./conversation.js";
import { fillJsonSchema } from "./json-schema-fill.js";

/**
 * Finds the offered tool a script names by suffix: an exact `name` wins, then an exact
 * qualified name (`namespace__name`), then the first tool whose qualified name ends with the
 * suffix (so `echo` finds Codex's `mcp__probe`/`echo`, Claude's `mcp__probe__echo`, OpenCode's
 * `probe_echo` and Gemini's `mcp_probe_echo`).
 */
export function findOfferedTool(tools: readonly OfferedTool[], suffix: string): OfferedTool | undefined {
  return (
    tools.find((t) => t.name === suffix && t.namespace === undefined) ??
    tools.find((t) => t.qualifiedName === suffix) ??
    tools.find((t) => t.name === suffix) ??
    tools.find((t) => t.qualifiedName.endsWith(suffix))
  );
}

/** How `@@shell` maps onto a harness's own shell tool. */
export interface ShellToolMapping {
  /** The tool name as the harness offers it. */
  tool: string;
  /** Which parameter carries the command. */
  commandParameter: string;
  /** Which harness uses it (documentation only; matching is by offered tool name). */
  harness: string;
}

/** The shell tools `@@shell` looks for, in order; the first one offered is used. */
export const SHELL_TOOL_MAPPINGS: readonly ShellToolMapping[] = [
  { tool: "exec_command", commandParameter: "cmd", harness: "Codex" },
  { tool: "run_shell_command", commandParameter: "command", harness: "Gemini CLI" },
  { tool: "Bash", commandParameter: "command", harness: "Claude Code" },
  { tool: "bash", commandParameter: "command", harness: "Pi, OpenCode" },
  { tool: "shell_command", commandParameter: "command", harness: "Codex (shell_command variant)" },
  { tool: "shell", commandParameter: "command", harness: "Codex (older, argv array)" },
];

/** The tool and arguments a `@@shell <cmd>` becomes for the offered tools, or undefined when none is a shell. */
export function shellToolCall(
  tools: readonly OfferedTool[],
  command: string,
): { tool: OfferedTool; args: Record<string, unknown> } | undefined {
  for (const mapping of SHELL_TOOL_MAPPINGS) {
    const tool = tools.find((t) => t.name === mapping.tool && t.namespace === undefined && t.kind === "function");
    if (!tool) continue;
    const properties = propertiesOf(tool.parameters);
    const commandSchema = properties[mapping.commandParameter] as JsonSchema | undefined;
    const isArgv = String(commandSchema?.["type"]).toLowerCase() === "array";
    const args: Record<string, unknown> = {
      [mapping.commandParameter]: isArgv ? ["bash", "-lc", command] : command,
    };
    // Fill other required parameters (OpenCode's bash wants a `description`) by type.
    for (const name of requiredOf(tool.parameters)) {
      if (name in args) continue;
      const filled = fillJsonSchema(properties[name]);
      args[name] = typeof filled === "string" ? "Scripted shell command" : filled;
    }
    return { tool, args };
  }
  return undefined;
}

function propertiesOf(schema: JsonSchema | undefined): Record<string, unknown> {
  const properties = schema?.["properties"];
  return properties && typeof properties === "object" ? (properties as Record<string, unknown>) : {};
}

function requiredOf(schema: JsonSchema | undefined): string[] {
  const required = schema?.["required"];
  return Array.isArray(required) ? required.filter((r): r is string => typeof r === "string") : [];
}

/** A short human list of offered tool names, for "tool not offered" replies. */
export function describeOfferedTools(tools: readonly OfferedTool[]): string {
  return tools.length === 0 ? "(none)" : tools.map((t) => t.qualifiedName).join(", ");
}
