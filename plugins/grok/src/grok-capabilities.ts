import type { CapabilityDeclaration } from "@switchyard/sdk";

/**
 * What Grok declares before `initialize`, over the shared ACP base. Negotiation then sets the
 * negotiable fields from what `grok agent stdio` advertises (resume and snapshot from
 * `loadSession`, MCP transports, model and mode switching); the Grok hook keeps fork off.
 * - No active steering (ACP has none): steering is cancel-and-restart.
 * - No native fork: the Grok driver does not use `session/fork`, so forks go through portable
 *   context.
 * - Structured questions arrive as `_x.ai/ask_user_question`.
 * - xAI sub-agents are not reported: their wire shape is not verified here (`subagents.native`
 *   stays `none` rather than claim `observed`).
 * - xAI's model list is short, so every current model is listed.
 * - **A profile's harness home** is the session's GROK_HOME (each session runs its own
 *   `grok agent stdio`), its **environment** goes over the instance's. **Tool rules**: none.
 *   The CLI's ACP mode takes no per-session tool allow/deny list that this plugin could verify
 *   (no binary here), so the shared policy refuses a profile with deny, ask or allowOnly rules.
 */
export const GROK_CAPABILITIES: CapabilityDeclaration = {
  sessions: {
    resume: true,
    modelSwitchInSession: false,
    runtimeModeSwitchInSession: false,
    pendingRequestsSurviveRestart: false,
    harnessHome: true,
    environment: true,
  },
  threads: { readSnapshot: true, fork: false, forkFromTurn: false },
  turns: {
    emitsTurnStarted: true,
    interrupt: true,
    activeSteering: false,
    steeringByInterruptRestart: true,
    queuedMessages: false,
    terminalStatusQuality: "strong",
  },
  tools: { shell: true, mcp: { http: true, sse: false, stdio: true }, dynamicToolCallbacks: false },
  runtimeRequests: { approvals: true, userInputQuestions: true },
  subagents: { native: "none", exposesChildThreadIds: false },
  context: { acceptsInstructions: false, maxHandoffChars: 24_000 },
  identity: { nativeThreadIds: "strong", nativeTurnIds: "none", nativeItemIds: "weak" },
  models: { shortList: "all_current" },
  runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
  interactionModes: ["default"],
};

/** Grok never forks natively, whatever it advertises. */
export function refineGrokCapabilities(negotiated: CapabilityDeclaration): CapabilityDeclaration {
  return { ...negotiated, threads: { ...negotiated.threads, fork: false, forkFromTurn: false } };
}
