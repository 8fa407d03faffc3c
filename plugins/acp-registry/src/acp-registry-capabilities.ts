import type { CapabilityDeclaration } from "@switchyard/sdk";
import type { acpSdk } from "@switchyard/sdk/acp";
import type { IgnorableAgentCapability } from "./acp-registry-options.js";

/**
 * What an ACP Registry instance declares before it has seen its agent: the ACP baseline and
 * nothing an arbitrary agent might lack. Everything the protocol negotiates is then set from
 * what the agent advertises at `initialize` and at session setup (the readiness probe's
 * disposable `session/new` does this before the first thread):
 * - `sessions.resume`, `threads.readSnapshot`, `identity.nativeThreadIds`: `loadSession` /
 *   `sessionCapabilities.resume`;
 * - `threads.fork`: `/unstable` `sessionCapabilities.fork` (never `forkFromTurn`);
 * - `tools.mcp.http|sse`: `mcpCapabilities` (stdio, through the host's bridge, is the ACP baseline);
 * - `sessions.modelSwitchInSession`: a `model` config option or a session `models` list;
 * - `sessions.runtimeModeSwitchInSession`, `plan` interaction mode: session modes;
 * - `subagents.native`: `observed` with the subagent sessions draft (`sessionCapabilities.subagents`).
 *
 * Not negotiable in ACP, so declared pessimistically:
 * - `tools.shell` false: ACP has no capability that says the agent runs commands (most do;
 *   their `execute` tool calls still show up as command items);
 * - `runtimeRequests.userInputQuestions` false: an agent may send form elicitations, but
 *   nothing says it will;
 * - `context.acceptsInstructions` false: instructions come with the first turn, after the
 *   session opened (the draft `systemPrompt` applies only at `session/new|load`).
 * Steering is interrupt-and-restart (`session/cancel`, then the new prompt). An arbitrary agent's
 * model list can be long (OpenCode's holds hundreds), so the short list is the first 8 in the
 * user's order.
 */
export const ACP_REGISTRY_CAPABILITIES: CapabilityDeclaration = {
  sessions: {
    resume: false,
    modelSwitchInSession: false,
    runtimeModeSwitchInSession: false,
    pendingRequestsSurviveRestart: false,
  },
  threads: { readSnapshot: false, fork: false, forkFromTurn: false },
  turns: {
    emitsTurnStarted: true,
    interrupt: true,
    activeSteering: false,
    steeringByInterruptRestart: true,
    queuedMessages: false,
    terminalStatusQuality: "strong",
  },
  tools: { shell: false, mcp: { http: false, sse: false, stdio: true }, dynamicToolCallbacks: false },
  runtimeRequests: { approvals: true, userInputQuestions: false },
  subagents: { native: "none", exposesChildThreadIds: false },
  context: { acceptsInstructions: false },
  identity: { nativeThreadIds: "weak", nativeTurnIds: "none", nativeItemIds: "weak" },
  models: { shortList: "first_n" },
  runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
  interactionModes: ["default"],
};

/** The `initialize` response with the features an instance ignores taken out. */
export function withoutIgnoredCapabilities(
  init: acpSdk.InitializeResponse,
  ignored: readonly IgnorableAgentCapability[] | undefined,
): acpSdk.InitializeResponse {
  if (ignored === undefined || ignored.length === 0) return init;
  const caps = init.agentCapabilities ?? {};
  const sessionCaps = { ...(caps.sessionCapabilities ?? {}) };
  const mcp = { ...(caps.mcpCapabilities ?? {}) };
  if (ignored.includes("sessionCapabilities.resume")) delete sessionCaps.resume;
  if (ignored.includes("sessionCapabilities.fork")) delete sessionCaps.fork;
  if (ignored.includes("mcpCapabilities.http")) mcp.http = false;
  if (ignored.includes("mcpCapabilities.sse")) mcp.sse = false;
  return {
    ...init,
    agentCapabilities: {
      ...caps,
      ...(ignored.includes("loadSession") ? { loadSession: false } : {}),
      sessionCapabilities: sessionCaps,
      mcpCapabilities: mcp,
    },
  };
}
