import type { McpEndpointGrant, OpenSessionInput, TurnInput } from "@switchyard/sdk";

let turnCounter = 0;
let sessionCounter = 0;

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

/**
 * An open-session input for an adapter test, with the defaults a new thread has (full access,
 * default interaction mode, no model, no resume cursor, no MCP grant): each call gets its own
 * `thread-<n>` / `psess-<n>`, and the session runs in `cwd` and emits to `emit`.
 */
export function openSessionInput(
  cwd: string,
  emit: OpenSessionInput["emit"],
  overrides: Partial<OpenSessionInput> = {},
): OpenSessionInput {
  sessionCounter += 1;
  return {
    threadId: `thread-${sessionCounter}`,
    providerSessionId: `psess-${sessionCounter}`,
    cwd,
    model: null,
    runtimeMode: "full-access",
    interactionMode: "default",
    resumeCursor: null,
    mcp: null,
    emit,
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
