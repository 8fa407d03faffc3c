/** An MCP tool's name as harnesses that flatten it report it (`mcp__<server>__<tool>`), split. @public */
export interface McpToolName {
  readonly server: string;
  readonly tool: string;
}

/**
 * `mcp__<server>__<tool>` → its server and tool (Claude Code, Pi's bridge), else null. The
 * server part is the shortest match, so a tool name may itself contain `__`.
 * @public
 */
export function parseMcpToolName(name: string): McpToolName | null {
  const match = /^mcp__(.+?)__(.+)$/.exec(name);
  return match === null ? null : { server: match[1]!, tool: match[2]! };
}
