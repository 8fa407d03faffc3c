import type { CapabilityDeclaration } from "@switchyard/sdk";

/**
 * Driver `codex` (`codex app-server`, one process per session). Every `true` below is exercised
 * by `test/codex-adapter.test.ts` against the real 0.171 binary.
 * - Steering is native (`turn/steer` with `expectedTurnId`); the policy's interrupt-and-restart
 *   fallback also works (`turn/interrupt`, then `turn/start`).
 * - Fork is native (`thread/fork`), from a turn too (`lastTurnId`, inclusive).
 * - Resume reopens the rollout by thread id (`thread/resume`) after any restart.
 * - Model and runtime mode can change per turn (`turn/start` takes `model`, `approvalPolicy`,
 *   `sandboxPolicy`).
 * - Approvals: commands, file changes, permission escalations and MCP tool-call elicitations.
 *   Structured user questions are off: `request_user_input` is refused by Codex outside plan
 *   mode, which this driver does not offer, and MCP form elicitations are declined.
 * - Instructions have their own channel: the turn's instructions (composed by the host) become a
 *   developer message (`thread/inject_items`) just before `turn/start`.
 * - Codex's own sub-agents (`spawn_agent`) are observed, with their native thread ids.
 * - Codex's model list is short and curated (`model/list`), so every current model is listed.
 */
export const CODEX_APP_SERVER_CAPABILITIES: CapabilityDeclaration = {
  sessions: {
    resume: true,
    modelSwitchInSession: true,
    runtimeModeSwitchInSession: true,
    pendingRequestsSurviveRestart: false,
    // A profile's harnessHome is the session's CODEX_HOME; its environment goes over the instance's.
    harnessHome: true,
    environment: true,
  },
  threads: { readSnapshot: true, fork: true, forkFromTurn: true },
  turns: {
    emitsTurnStarted: true,
    interrupt: true,
    activeSteering: true,
    steeringByInterruptRestart: true,
    queuedMessages: false,
    terminalStatusQuality: "strong",
  },
  tools: { shell: true, mcp: { http: true, sse: false, stdio: true }, dynamicToolCallbacks: false },
  runtimeRequests: { approvals: true, userInputQuestions: false },
  subagents: {
    native: "observed",
    exposesChildThreadIds: true,
    control: "observe",
    reportsUsage: false,
    reportsTranscript: true,
  },
  context: { acceptsInstructions: true, maxHandoffChars: 48_000 },
  identity: { nativeThreadIds: "strong", nativeTurnIds: "strong", nativeItemIds: "weak" },
  models: { shortList: "all_current" },
  runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
  interactionModes: ["default"],
};

/**
 * Driver `codex-exec` (`@openai/codex-sdk`: one `codex exec` process per turn).
 * - No steering and no native fork: the shared policy steers by interrupt-and-restart and forks
 *   with portable context. The session has no `steerTurn`, `forkThread`, `readSnapshot` or
 *   `respondToRuntimeRequest` at all (the host's guard refuses them).
 * - Interrupt aborts the turn's process (the SDK's AbortSignal).
 * - Resume by thread id (`codex exec resume <id>`), one process per turn, so model and runtime
 *   mode apply per turn.
 * - No approvals: `codex exec` cannot ask. `approval-required` runs with a read-only sandbox
 *   (nothing that would need approval can happen); `full-access` runs unsandboxed.
 *   `auto-accept-edits` is not offered (it would need command approvals).
 * - No instruction channel: the host folds instructions into the prompt.
 * - The same short, curated Codex model list: every current model is listed.
 * - A profile's `harnessHome` is every turn's CODEX_HOME (the conversation lives there), its
 *   environment goes over the instance's. **No tool rules**: `codex exec` has no per-tool
 *   allow/deny (its sandbox and approval policy are the runtime mode's), so the shared policy
 *   refuses a profile with deny, ask or allowOnly rules.
 */
export const CODEX_EXEC_CAPABILITIES: CapabilityDeclaration = {
  sessions: {
    resume: true,
    modelSwitchInSession: true,
    runtimeModeSwitchInSession: true,
    pendingRequestsSurviveRestart: false,
    // Every turn's `codex exec` runs with the profile's home as CODEX_HOME and its environment.
    harnessHome: true,
    environment: true,
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
  tools: { shell: true, mcp: { http: true, sse: false, stdio: true }, dynamicToolCallbacks: false },
  runtimeRequests: { approvals: false, userInputQuestions: false },
  subagents: { native: "none", exposesChildThreadIds: false },
  context: { acceptsInstructions: false, maxHandoffChars: 48_000 },
  identity: { nativeThreadIds: "strong", nativeTurnIds: "none", nativeItemIds: "none" },
  models: { shortList: "all_current" },
  runtimeModes: ["approval-required", "full-access"],
  interactionModes: ["default"],
};
