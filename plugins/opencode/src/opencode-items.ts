import type { ToolCallStart, ToolKind } from "@switchyard/sdk";

const KINDS: Readonly<Record<string, ToolKind>> = {
  bash: "command",
  edit: "file_change",
  write: "file_change",
  patch: "file_change",
  multiedit: "file_change",
  apply_patch: "file_change",
  read: "file_read",
  list: "file_read",
  glob: "search",
  grep: "search",
  codesearch: "search",
  webfetch: "web",
  websearch: "web",
  task: "subagent",
};

/** The MCP server and tool of an OpenCode tool name (`<server key>_<tool>`), for the configured keys. */
export function mcpToolOf(
  name: string,
  serverKeys: readonly string[],
): { readonly server: string; readonly tool: string } | null {
  for (const key of serverKeys) {
    if (name.startsWith(`${key}_`) && name.length > key.length + 1)
      return { server: key, tool: name.slice(key.length + 1) };
  }
  return null;
}

function text(value: unknown): string | null {
  return typeof value === "string" && value.trim() !== "" ? value : null;
}

/** How a tool call shows in a timeline: its kind, and a one-line title (the command, the file). */
export function toolCallStart(
  itemId: string,
  name: string,
  input: Record<string, unknown>,
  title: string | undefined,
  serverKeys: readonly string[],
): ToolCallStart {
  const mcp = mcpToolOf(name, serverKeys);
  if (mcp !== null) return { itemId, kind: "mcp", name, title: `${mcp.server}/${mcp.tool}`, server: mcp.server, input };
  const kind = KINDS[name] ?? "other";
  const summary =
    text(input["command"]) ??
    text(input["filePath"]) ??
    text(input["path"]) ??
    text(input["pattern"]) ??
    text(input["url"]) ??
    text(input["query"]) ??
    text(input["description"]) ??
    text(title) ??
    name;
  return { itemId, kind, name, title: summary.split("\n")[0]!.slice(0, 200), input };
}

/** The answer inside a `task` tool's output (`<task …><task_result>…</task_result></task>`), else the output. */
export function taskResultOf(output: string): string {
  const match = /<task_result>([\s\S]*?)<\/task_result>/.exec(output);
  return (match?.[1] ?? output).trim();
}
