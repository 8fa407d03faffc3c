import type { McpEndpointGrant, TurnInput } from "@switchyard/sdk";

let turnCounter = 0;

/**
 * A turn input for an adapter test, with the defaults a plain turn has (full access, default
 * interaction mode, no instructions, no model): each call gets its own `turn-<n>` / `run-<n>`.
 */
export function turnInput(text: string, overrides: Partial<TurnInput> = {}): TurnInput {
  turnCounter += 1;
  return {
    turnId: `turn-${turnCounter}`,
    runId: `run-${turnCounter}`,
    text,
    instructions: null,
    model: null,
    runtimeMode: "full-access",
    interactionMode: "default",
    restartOfTurnId: null,
    ...overrides,
  };
}

/** An MCP grant for an endpoint, the shape the host issues to a session (server key `switchyard` unless overridden). */
export function mcpGrantFor(url: string, token: string, overrides: Partial<McpEndpointGrant> = {}): McpEndpointGrant {
  return {
    serverName: "switchyard",
    url,
    token,
    toolTimeoutMs: 60_000,
    blockingToolNames: ["delegate_task", "t3_thread_wait"],
    directToolNames: ["t3_thread_wait"],
    instructions: "Use the switchyard tools to delegate.",
    stdioBridge: { command: "unused", args: [], env: {} },
    ...overrides,
  };
}
