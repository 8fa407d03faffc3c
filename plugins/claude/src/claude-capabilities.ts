import type { CapabilityDeclaration } from "@switchyard/sdk";

/**
 * Driver `claude` (the Claude Agent SDK 0.3.337 and its bundled `claude` 2.1.337, one process
 * per session in streaming-input mode). Every `true` below is exercised against the real SDK by
 * `test/claude.conformance.test.ts` and `test/claude-adapter.test.ts`.
 * - **Steering is native**: a message pushed into the running query is folded into the turn at
 *   the next tool boundary; during a text-only reply Claude Code runs it right after that reply.
 *   Either way the adapter keeps the host's turn open until Claude has answered every message
 *   pushed into it, so the steer is answered inside the same turn. Interrupt-and-restart works
 *   too (`interrupt()`, then the next prompt), so the policy can use it. Claude's own
 *   `priority: "now"` (abort and restart with both messages merged) is not used: the shared
 *   policy owns restarts.
 * - **Interrupt** is `interrupt()`: the turn ends `error_during_execution` with
 *   `terminal_reason: "aborted_streaming"`, reported `interrupted`.
 * - **Resume** by session id (`resume`) in a new process; **fork** is the SDK's `forkSession`
 *   (a new session with the whole transcript). A fork at a given host turn is not offered.
 * - **Snapshot** reads the transcript (`getSessionMessages`).
 * - **Model and runtime mode switch in session** (`setModel`, `setPermissionMode`).
 * - **Approvals** through `canUseTool`; Claude's structured questions (`AskUserQuestion`) are
 *   not offered (the tool is disallowed), so `userInputQuestions` is false.
 * - **No instruction channel**: Claude's system prompt is fixed for a whole session (and
 *   recorded in its transcript), so the host folds every turn's instructions into the prompt.
 * - Claude's own sub-agents (the `Agent` tool) are observed; their ids are tool call ids, not
 *   readable threads.
 * - Claude's model list is short (a few aliases), so every current model is listed.
 * - **A profile's tool rules**: deny rules become `disallowedTools` (removed from the model's
 *   context; a call anyway is refused by Claude Code), allow rules `allowedTools`, `allowOnly`
 *   the `tools` list of built-in tools, ask rules Claude's own ask rules (honoured in every mode;
 *   in full access the adapter passes those prompts to the host). **Harness home and environment**: a profile's `harnessHome`
 *   is the session's CLAUDE_CONFIG_DIR, its environment is laid over the instance's.
 */
export const CLAUDE_CAPABILITIES: CapabilityDeclaration = {
  sessions: {
    resume: true,
    modelSwitchInSession: true,
    runtimeModeSwitchInSession: true,
    pendingRequestsSurviveRestart: false,
    harnessHome: true,
    environment: true,
  },
  threads: { readSnapshot: true, fork: true, forkFromTurn: false },
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
    mcp: { http: true, sse: true, stdio: true },
    dynamicToolCallbacks: false,
    rules: { allow: true, deny: true, ask: true, allowOnly: true },
    extraMcpServers: true,
  },
  runtimeRequests: { approvals: true, userInputQuestions: false },
  subagents: {
    native: "observed",
    exposesChildThreadIds: false,
    control: "observe",
    reportsUsage: true,
    reportsTranscript: true,
  },
  context: { acceptsInstructions: false, maxHandoffChars: 48_000 },
  identity: { nativeThreadIds: "strong", nativeTurnIds: "none", nativeItemIds: "strong" },
  models: { shortList: "all_current" },
  runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
  interactionModes: ["default"],
};
