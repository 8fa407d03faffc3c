import type { McpEndpointGrant, ToolCallStart } from "@switchyard/sdk";
import { canonicalServerName } from "./codex-mcp-config.js";

/**
 * What a Codex tool item is, as `tool_call.started` reports it. The item id is left to the
 * driver: app-server ids are unique in the thread, exec ids restart with every process.
 */
export type ToolCallShape = Omit<ToolCallStart, "itemId">;

/** How a tool item ended. */
export interface ToolCallEnd {
  readonly status: "completed" | "failed" | "declined";
  readonly output?: string;
}

const MAX_OUTPUT_CHARS = 16_000;

/** A tool's output as a timeline keeps it: at most 16,000 characters. */
export function clipOutput(text: string): string {
  return text.length > MAX_OUTPUT_CHARS ? `${text.slice(0, MAX_OUTPUT_CHARS)}…` : text;
}

/** The command a person typed, without Codex's `/bin/bash -lc '…'` wrapper. */
export function commandTitle(item: {
  readonly command: string;
  readonly commandActions?: readonly { readonly command: string }[] | null;
}): string {
  const actions = item.commandActions ?? [];
  if (actions.length > 0) return actions.map((action) => action.command).join(" && ");
  const wrapped = /^\/bin\/(?:ba|z)?sh -lc '(.*)'$/s.exec(item.command);
  return wrapped?.[1] ?? item.command;
}

/**
 * An MCP tool call, named `mcp__<server>__<tool>` with the grant's server name: Codex reports
 * calls of the direct-tools entry as `switchyard-direct`, which is still the Switchyard server.
 */
export function mcpToolCallShape(
  server: string,
  tool: string,
  input: unknown,
  grant: McpEndpointGrant | null,
): ToolCallShape {
  const canonical = canonicalServerName(server, grant);
  return { kind: "mcp", name: `mcp__${canonical}__${tool}`, title: `${canonical}/${tool}`, server: canonical, input };
}
