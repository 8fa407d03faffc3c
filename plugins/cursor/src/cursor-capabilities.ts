import type { CapabilityDeclaration } from "@switchyard/sdk";

/**
 * Driver `cursor` (`@cursor/sdk` 1.0.32, a local agent in a sidecar; the agent loop and
 * the model run on Cursor's backend). Every `true` below is exercised against the real SDK and
 * the fake Cursor backend by `test/cursor.conformance.test.ts` and `test/cursor-adapter.test.ts`.
 * - **Steering is native, and the backend decides**: `run.steer(text)` answers
 *   `complete_delivered` (the running turn took it) or `revert_to_followup` (the backend queued
 *   it for the next turn, cancelled or rejected it, or did not answer within 15 s). The SDK
 *   hands the message back in the second case, so `steerTurn` rejects and the host queues the
 *   message as a follow-up run (its timeline records the fall-back). `run.supports("steer")`
 *   answers false, but the method exists and works.
 * - **Interrupt** is `run.cancel()` (the SDK closes the run's stream); interrupt-and-restart
 *   works too (a new `send` after the cancel).
 * - **Resume** is `Agent.resume(agentId)` over the thread's agent store, in a new process; the
 *   history is what the backend's checkpoints hold, sent back with the next run.
 * - **No fork** (the SDK has none): the policy forks by portable context.
 * - **No approvals**: the SDK's local executor approves every tool itself and offers no
 *   callback, so the only runtime mode it can honour is `full-access`; the policy refuses or
 *   steps down narrower work, and a turn asked to run narrower is refused.
 * - **Busy**: `send` during an active run throws `AgentBusyError`, so the adapter never queues
 *   natively (`queuedMessages` false); the host queues.
 * - **No instruction channel**: the SDK's `systemPrompt` replaces Cursor's whole harness prompt
 *   (and is gated server-side), so the host folds instructions into the prompt.
 * - Cursor's own sub-agents (the `task` tool) are observed.
 * - Cursor's catalog is long, so the short list is cut (`first_n`).
 */
export const CURSOR_CAPABILITIES: CapabilityDeclaration = {
  sessions: {
    resume: true,
    modelSwitchInSession: true,
    runtimeModeSwitchInSession: false,
    pendingRequestsSurviveRestart: false,
  },
  threads: { readSnapshot: false, fork: false, forkFromTurn: false },
  turns: {
    emitsTurnStarted: true,
    interrupt: true,
    activeSteering: true,
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
  runtimeRequests: { approvals: false, userInputQuestions: false },
  subagents: {
    native: "observed",
    exposesChildThreadIds: false,
    control: "observe",
    reportsUsage: false,
    reportsTranscript: false,
  },
  context: { acceptsInstructions: false, maxHandoffChars: 48_000 },
  identity: { nativeThreadIds: "strong", nativeTurnIds: "weak", nativeItemIds: "weak" },
  models: { shortList: "first_n" },
  runtimeModes: ["full-access"],
  interactionModes: ["default"],
};
