import type { CapabilityDeclaration } from "@switchyard/sdk";

/**
 * What the harness can do, and so what the host may ask of it. Anything left out is read as
 * unsupported, and the shared policy degrades around it:
 * - no active steering: steering interrupts the turn and restarts it with the new message;
 * - no native fork: forks carry the conversation as portable context in their first turn;
 * - no `tools.mcpGrantUpdate`: the token travels in the harness's environment, fixed at spawn,
 *   so the host renews it by reopening the session (it resumes) between turns.
 * Declare a capability only with the session method that implements it: the conformance suite
 * checks both directions.
 */
export const TEMPLATE_CAPABILITIES: CapabilityDeclaration = {
  sessions: {
    resume: true,
    modelSwitchInSession: false,
    runtimeModeSwitchInSession: true,
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
  tools: {
    shell: true,
    mcp: { http: true, sse: false, stdio: false },
    dynamicToolCallbacks: false,
    mcpGrantUpdate: false,
  },
  runtimeRequests: { approvals: true, userInputQuestions: false },
  subagents: { native: "none", exposesChildThreadIds: false },
  // Instructions go to the harness's own instruction field, so the host never folds them into the message.
  context: { acceptsInstructions: true, maxHandoffChars: 24_000 },
  identity: { nativeThreadIds: "strong", nativeTurnIds: "weak", nativeItemIds: "weak" },
  models: { shortList: "first_n" },
  runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
  interactionModes: ["default"],
};
