import type { CapabilityDeclaration } from "@switchyard/sdk";

/**
 * What a Pi instance can do, checked against `pi --mode rpc` 1.6.0 (and 0.73.1):
 * - **Steering is native** (`steer`): the text lands before Pi's next model call in the same run.
 *   Interrupt is `abort` (Pi waits until idle, then `agent_end` with `stopReason: "aborted"`), so
 *   interrupt-and-restart works too.
 * - **Terminal status is strong**: `agent_end` ends a run, except after a provider error while
 *   Pi's auto-retry or overflow compaction goes on (the adapter waits for those to settle).
 * - **Resume** reopens the session file (the resume cursor) in a new process; **fork** is Pi's
 *   `clone` (a new session file with the current branch). Pi's own `fork` cuts before a user
 *   message, but host turn ids are not recorded in Pi's session, so `forkFromTurn` stays false.
 * - **Snapshot** is `get_messages`.
 * - **Model and runtime mode switch in session**: a new model restarts the Pi process on the same
 *   session file (Pi's `set_model` would rewrite the user's default model in settings.json); the
 *   runtime mode lives in a state file the Switchyard extension reads at every tool call.
 * - **MCP over HTTP** through the Switchyard extension (Pi has no MCP client of its own). A
 *   rotated credential reaches a live session through the state file, which the extension
 *   reads at every Switchyard call (`tools.mcpGrantUpdate`).
 * - **Approvals**: Pi has no approval policy; the Switchyard extension asks through Pi's
 *   extension UI before `bash`, `edit`, `write` and third-party tools, as the runtime mode says.
 *   Pi raises no structured questions of its own (other extensions' dialogs are dismissed).
 * - No plan mode. Native sub-agents are **observed**: Pi has none of its own, but when its example
 *   subagent extension is installed, the task cards of its `subagent` tool (`details.results`)
 *   are reported as `subagent.observed`, with no child thread id (seed 000).
 * - Per-turn instructions go into the prompt (so a handoff stays in the conversation); the shared
 *   orchestration instructions ride on the system prompt through the extension.
 * - Pi's catalog spans every provider it knows (hundreds of models), so the short list is the
 *   first 8 in the user's order.
 * - A profile's **harness home** is the session's `PI_CODING_AGENT_DIR` (models.json, settings,
 *   auth; the session's conversation files live under it), its **environment** goes over the
 *   instance's. **Tool rules** (allow, deny, ask, allowOnly) are applied by the Switchyard
 *   extension at every tool call, by Pi's tool names (`bash`, `read`, `edit`, `write`, `grep`,
 *   `find`, `ls`; case-insensitive, so Claude's `Bash` works) with patterns on the command or
 *   path: deny blocks the call (the tool stays listed to the model), ask asks in every mode,
 *   allow runs unasked, allowOnly blocks Pi's own tools no rule names (the Switchyard tools stay).
 */
export const PI_CAPABILITIES: CapabilityDeclaration = {
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
    mcp: { http: true, sse: false, stdio: false },
    dynamicToolCallbacks: false,
    mcpGrantUpdate: true,
    rules: { allow: true, deny: true, ask: true, allowOnly: true },
  },
  runtimeRequests: { approvals: true, userInputQuestions: false },
  subagents: { native: "observed", exposesChildThreadIds: false },
  context: { acceptsInstructions: false, maxHandoffChars: 24_000 },
  identity: { nativeThreadIds: "strong", nativeTurnIds: "none", nativeItemIds: "weak" },
  models: { shortList: "first_n" },
  runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
  interactionModes: ["default"],
};
