import type { CapabilityDeclaration } from "@switchyard/sdk";

/**
 * What the agent declares before `initialize`, over the shared ACP base. At `initialize` the
 * shared adapter then sets the negotiable fields from what the agent advertises (resume and
 * snapshot from `loadSession`, fork, MCP transports, model and mode switching), so this is the
 * pessimistic start, not a promise:
 * - no active steering (ACP has none): steering cancels the prompt and starts a new one;
 * - approvals are ACP's `session/request_permission`; questions are this agent's
 *   `_template/ask_user_question` extension;
 * - no instruction channel (ACP has no system prompt): the host folds instructions into the
 *   prompt inside `<switchyard_instructions>` itself.
 */
export const TEMPLATE_CAPABILITIES: CapabilityDeclaration = {
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
  tools: { shell: true, mcp: { http: false, sse: false, stdio: true }, dynamicToolCallbacks: false },
  runtimeRequests: { approvals: true, userInputQuestions: true },
  subagents: { native: "none", exposesChildThreadIds: false },
  context: { acceptsInstructions: false, maxHandoffChars: 24_000 },
  identity: { nativeThreadIds: "strong", nativeTurnIds: "none", nativeItemIds: "weak" },
  models: { shortList: "first_n" },
  runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
  interactionModes: ["default"],
};
