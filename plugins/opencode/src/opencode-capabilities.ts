import type { CapabilityDeclaration } from "@switchyard/sdk";

/**
 * What an OpenCode instance can do, checked against `opencode serve` 1.18.33 through
 * `@opencode-ai/sdk` 1.19.3 (every `true` is exercised by the plugin's tests against the real
 * binary):
 * - **Turns** are `session.promptAsync` plus the `/event` stream; a turn ends at `session.idle`
 *   (the REST `session.status` sometimes omits a busy session, so it is never asked).
 * - **Steering is native, at step boundaries.** A prompt sent while a turn runs is taken into
 *   the same turn: during a tool call it is folded into the next model request (the turn's
 *   planned last step never runs); during a text-only step it waits for that step and is then
 *   answered, still before `session.idle`. Either way its answer belongs to the steered turn,
 *   which is why `activeSteering` is declared and `queuedMessages` says OpenCode holds it.
 * - **Interrupt** is `session.abort` (the turn ends `interrupted`); interrupt-and-restart works too.
 * - **Resume**: the conversation lives in OpenCode's sqlite db under the instance's data
 *   directory, so a session id (the resume cursor) reopens on any later server.
 * - **Fork** is `session.fork`, cut at the first user message after the host turn (each prompt
 *   carries its host turn id in its part metadata), so `forkFromTurn` is exact.
 * - **Model per turn** (`provider/model` ids); the **runtime mode** is OpenCode's `permission`
 *   config, so a new mode restarts the session's server (a second or two) and resumes.
 * - **Approvals** are `permission.asked` (answered `once` / `always` / `reject`); **questions**
 *   are OpenCode's `question` tool (`question.asked`, answered with the chosen labels).
 * - **MCP over HTTP** with the session's own bearer token, one `opencode serve` per provider
 *   session (MCP servers are configured per server, credentials are per session).
 * - **Native sub-agents** (the `task` tool's child sessions) are observed, without a thread.
 * - No instruction channel that lasts: per-turn instructions go into the prompt; the shared
 *   orchestration instructions go into OpenCode's `instructions` (every request's system prompt).
 * - No plan mode is offered (OpenCode's `plan` agent has its own permissions, which the runtime
 *   mode would have to override).
 * - The catalog holds every model of every provider OpenCode can use (hundreds with a few
 *   keys), so the short list is the first 8 in the user's order.
 * - **A profile's tool rules** are OpenCode's own `permission` config of the session's server
 *   (`opencode-tool-rules.ts`): names are OpenCode's permissions (`bash`, `edit`, `read`,
 *   `webfetch`, `task`, `<mcp server>_<tool>`…; Claude's `Bash`, `Write` map onto them),
 *   patterns its own (`bash(git push*)`). Deny drops the tool or refuses the call, ask raises a
 *   `permission.asked` in every mode, allow runs without asking, `allowOnly` turns every
 *   OpenCode tool off but those named (MCP servers' tools stay). Each provider session has
 *   its own server, so rules never leak between sessions, and OpenCode's own sub-agents obey
 *   them too (the config applies to every agent of the server).
 * - **Harness home**: a profile's `harnessHome` is the session's `OPENCODE_CONFIG_DIR` (its
 *   agents, commands, plugins) and its `opencode.json` the session's config in place of the
 *   instance's. OpenCode still reads the user's global config folder underneath (it has no
 *   switch for that), and the conversation db stays the instance's (resume works across homes).
 *   **Environment** goes over the instance's; **extra MCP servers** are `mcp` entries
 *   (`remote` / `local`) in the session's config content, never in argv.
 */
export const OPENCODE_CAPABILITIES: CapabilityDeclaration = {
  sessions: {
    resume: true,
    modelSwitchInSession: true,
    runtimeModeSwitchInSession: true,
    pendingRequestsSurviveRestart: false,
    harnessHome: true,
    environment: true,
  },
  threads: { readSnapshot: true, fork: true, forkFromTurn: true },
  turns: {
    emitsTurnStarted: true,
    interrupt: true,
    activeSteering: true,
    steeringByInterruptRestart: true,
    queuedMessages: true,
    terminalStatusQuality: "strong",
  },
  tools: {
    shell: true,
    mcp: { http: true, sse: false, stdio: false },
    dynamicToolCallbacks: false,
    rules: { allow: true, deny: true, ask: true, allowOnly: true },
    extraMcpServers: true,
  },
  runtimeRequests: { approvals: true, userInputQuestions: true },
  subagents: {
    native: "observed",
    exposesChildThreadIds: false,
    control: "observe",
    reportsUsage: true,
    reportsTranscript: true,
  },
  context: { acceptsInstructions: false, maxHandoffChars: 48_000 },
  identity: { nativeThreadIds: "strong", nativeTurnIds: "none", nativeItemIds: "strong" },
  models: { shortList: "first_n" },
  runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
  interactionModes: ["default"],
};
