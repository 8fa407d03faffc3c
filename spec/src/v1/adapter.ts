import type { ProviderCapabilitiesV1 } from "./capabilities.js";
import type { AdapterEventV1, ApprovalDecisionV1 } from "./events.js";
import type { InteractionMode, RuntimeMode } from "../modes.js";

/** A model a provider advertises. @public */
export interface ModelDescriptorV1 {
  /** The id passed back as `model` when opening a session or starting a turn. */
  readonly id: string;
  /** Name for people. */
  readonly displayName?: string;
  /** An older model kept for compatibility; listed only when searched for. */
  readonly legacy?: boolean;
  /** The provider's default model. */
  readonly isDefault?: boolean;
  /**
   * The reasoning efforts this model accepts as `TurnInput.effort`, in the provider's own names
   * (Codex `low`/`medium`/`high`, Pi thinking levels, an OpenCode variant…), weakest first.
   * Missing or empty: the model takes no effort setting, and the host refuses one for it.
   */
  readonly efforts?: readonly string[];
  /** The effort the provider uses when none is given, if it says. */
  readonly defaultEffort?: string;
  /**
   * Where the provider's list got this model, so a user can tell the models their endpoint or
   * gateway serves from the ones a harness merely knows. Missing: not said.
   * @experimental
   */
  readonly source?: ModelSourceV1;
}

/**
 * Where a listed model comes from.
 * - `harness_config`: the harness's configuration names it for the endpoint it uses (Codex's
 *   `model` in config.toml, Pi's models.json, an OpenCode provider's `models`, Claude's
 *   `ANTHROPIC_MODEL`): what the user configured, not checked against the endpoint.
 * - `harness_catalog`: the harness's own built-in catalog (Codex's `model/list`, Claude Code's
 *   aliases, an ACP agent's session models), the same whatever endpoint the harness is pointed
 *   at: a custom endpoint or gateway may serve none of these.
 * - `endpoint`: the backend the harness talks to listed it (Cursor's account models).
 * @experimental
 */
export type ModelSourceV1 = "harness_config" | "harness_catalog" | "endpoint";

/**
 * How far a status probe may go.
 * - `inspect`: look without touching anything: find the executable, run its version command
 *   (with a throwaway home when the harness writes into its home on every start), check that
 *   the instance's home is a folder, read config and auth files. Never starts a harness server
 *   or session, never writes into the harness's home, never uses the network. Listing
 *   (`switchyard providers`) and the host's first quick answer use it.
 * - `full`: may also start the harness briefly (an app-server, an ACP `initialize` or a
 *   disposable `session/new`) to list its models and prove its login. The host's provider
 *   snapshot refreshes with it.
 * Neither ever starts a model turn.
 * @public
 */
export type ProbeDepthV1 = "inspect" | "full";

/** What `probe` gets. @public */
export interface ProbeOptionsV1 {
  /** Default `full`. (An adapter written before depths existed ignores it and always probes fully.) */
  readonly depth?: ProbeDepthV1;
}

/** What a status probe found. Probes never start a conversation with a model. @public */
export interface ProviderStatusV1 {
  /** The harness (binary, package, SDK) is present. */
  readonly installed: boolean;
  /** The harness can be started (it ran, or its version answered). */
  readonly executable: boolean;
  /** The harness has credentials; `unknown` when it cannot tell without a model call. */
  readonly authenticated: boolean | "unknown";
  /** The harness version, when known. */
  readonly version?: string;
  /** Models it advertises, in the provider's own order. Empty when it publishes no list. */
  readonly models: readonly ModelDescriptorV1[];
  /** Why it is not ready, in words a user (or a model) can act on. */
  readonly message?: string;
  /** Where the harness was looked for and found, and how its version compares with the tested one. */
  readonly harness?: HarnessReportV1;
  /**
   * What does not stop the instance but a user should know (a harness version outside the
   * range the plugin was tested with). Absent means none.
   */
  readonly warnings?: readonly string[];
}

/** Where a harness was looked for, in the order tried. @public */
export type HarnessSourceV1 =
  /** The executable the instance's options name. */
  | "configured"
  /** A command on the PATH the harness would run with. */
  | "path"
  /** A package in the global npm root (`npm i -g …`). */
  | "global"
  /** A package resolvable from the plugin itself (installed next to it, or a checkout's workspace). */
  | "local";

/** One place a harness was looked for. @public */
export interface HarnessLookupV1 {
  readonly source: HarnessSourceV1;
  /** What was looked for there, in words (`codex on PATH`, `@openai/codex in /usr/lib/node_modules`). */
  readonly what: string;
  /** The file found there, or null. */
  readonly found: string | null;
  /** Why what was found there cannot be used (a package installed without its platform binary). */
  readonly problem?: string;
}

/**
 * How a plugin found its harness, reported with a probe so `switchyard providers` and
 * `switchyard doctor` can say where it came from, whether its version is one the plugin was
 * tested with, and how to install it.
 * @public
 */
export interface HarnessReportV1 {
  /** Name for people (`Codex`). */
  readonly displayName: string;
  /** Every place tried, in order, up to the one that answered. */
  readonly searched: readonly HarnessLookupV1[];
  /** Where it was found, or null when nowhere. */
  readonly source: HarnessSourceV1 | null;
  /** The executable (or package folder) that will run, or null. */
  readonly location: string | null;
  /** The npm package it belongs to, when it came from one. */
  readonly packageName?: string;
  /** Its version, when known. */
  readonly version?: string;
  /** The semver range of harness versions the plugin was tested with. */
  readonly testedVersions?: string;
  /** Whether `version` is in `testedVersions`; null when either is unknown. */
  readonly inTestedRange: boolean | null;
  /** How a user installs it (`npm i -g @openai/codex`). */
  readonly install: string;
}

/**
 * How the Switchyard MCP endpoint reaches a session. The host issues one credential per
 * provider session, before the session opens, and revokes it when the session closes. Before
 * the credential's maximum lifetime the host hands a live session a new grant
 * (`updateMcpGrant`, where `tools.mcpGrantUpdate` is declared) or reopens it between turns.
 * The token is a secret: pass it to the harness in a header or its environment, never in argv,
 * never in logs.
 * @public
 */
export interface McpEndpointGrantV1 {
  /** The server key the harness should register (`switchyard` by default). */
  readonly serverName: string;
  /** `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  /** The bearer token for this provider session. */
  readonly token: string;
  /** A client tool timeout the harness should use; above the server's longest blocking wait. */
  readonly toolTimeoutMs: number;
  /** Tools that block until work finishes (`delegate_task`, `t3_thread_wait`). */
  readonly blockingToolNames: readonly string[];
  /**
   * Tools a harness with deferred or scripted tool use should offer as direct tool calls
   * (never deferred behind a tool search, never run inside a code sandbox), so a blocking wait
   * really blocks the model (seed 000: `t3_thread_wait`). Absent means none.
   */
  readonly directToolNames?: readonly string[];
  /**
   * The shared orchestration instructions, for reference only: the host delivers them itself
   * with the first turn of a new conversation (in `TurnInputV1.instructions`, or folded into its
   * text), so an adapter must not deliver them a second time.
   */
  readonly instructions: string;
  /**
   * A stdio bridge for harnesses without an HTTP MCP client. Endpoint and token travel in
   * `env`, never in `args`.
   */
  readonly stdioBridge: {
    readonly command: string;
    readonly args: readonly string[];
    readonly env: Readonly<Record<string, string>>;
  };
}

/** What `openSession` gets. @public */
export interface OpenSessionInputV1 {
  /** The Switchyard thread the session serves. */
  readonly threadId: string;
  /** The host's id for this provider session. */
  readonly providerSessionId: string;
  /** Working directory for the agent (absolute). */
  readonly cwd: string;
  /** The model to use, or null for the provider's default. */
  readonly model: string | null;
  /** The runtime mode to enforce. */
  readonly runtimeMode: RuntimeMode;
  /** The interaction mode. */
  readonly interactionMode: InteractionMode;
  /** A resume cursor from an earlier session of this thread, or null for a new conversation. */
  readonly resumeCursor: string | null;
  /** The Switchyard MCP endpoint for this session, or null when MCP is not injected. */
  readonly mcp: McpEndpointGrantV1 | null;
  /** Where the session reports its events. Never throws; calls after `close` are ignored. */
  readonly emit: (event: AdapterEventV1) => void;
  /**
   * A profile's tool rules to enforce, by the harness's own tool names, or null / absent for
   * none. The host passes them only to a provider whose `tools.rules` declares each kind given.
   */
  readonly toolRules?: ToolRulesV1 | null;
  /**
   * The harness's home for this session (a profile's `harnessHome`, an absolute path) in place
   * of the instance's `homePath`, or null / absent. Given only where `sessions.harnessHome` is declared.
   */
  readonly harnessHome?: string | null;
  /**
   * Extra environment for the harness process (a profile's `environment`), set over the
   * instance's. Given only where `sessions.environment` is declared. Values may be secrets:
   * never put them in argv or logs.
   */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * Extra MCP servers for the harness beside Switchyard's (a profile's `mcpServers`), by name.
   * Given only where `tools.extraMcpServers` is declared. Headers and env may hold secrets.
   */
  readonly mcpServers?: Readonly<Record<string, ExtraMcpServerV1>>;
}

/** An MCP server a profile adds to a session: streamable HTTP, or a stdio command. @public */
export type ExtraMcpServerV1 =
  | {
      readonly type: "http";
      readonly url: string;
      readonly headers?: Readonly<Record<string, string>>;
    }
  | {
      readonly type: "stdio";
      readonly command: string;
      readonly args?: readonly string[];
      readonly env?: Readonly<Record<string, string>>;
    };

/**
 * A profile's tool rules, by the harness's own tool names and patterns (`Bash`,
 * `Bash(git push:*)`, `edit`, `mcp__server__tool`). @public
 */
export interface ToolRulesV1 {
  /** Tools that run without asking (with `allowOnly`, the only harness tools offered). */
  readonly allow: readonly string[];
  /** Tools that must not run. */
  readonly deny: readonly string[];
  /** Tools that ask for approval each time. */
  readonly ask: readonly string[];
  /** True: a harness tool no allow or ask rule names is unavailable. */
  readonly allowOnly: boolean;
}

/** What `startTurn` gets. @public */
export interface TurnInputV1 {
  /** The host's id for this turn (one attempt of a run). Events carry it back. */
  readonly turnId: string;
  /** The host's run id (several attempts share it after an interrupt-and-restart). */
  readonly runId: string;
  /** The user message. */
  readonly text: string;
  /**
   * The one channel instructions travel on: everything the model should be told with this turn
   * (the orchestration instructions on the first turn of a new conversation, a history handoff,
   * a role instruction, portable context), composed by the host. Only a provider that declares
   * `context.acceptsInstructions` receives them here, and puts them on its own instruction
   * channel (a developer or system message) and nowhere else. For every other provider the host
   * has already folded them into `text` and this is null, so an adapter never folds.
   */
  readonly instructions: string | null;
  /** The model for this turn, or null for the session's. */
  readonly model: string | null;
  /**
   * The reasoning effort for this turn: one of the model's `ModelDescriptor.efforts` (the host
   * checked it), or null / absent for the provider's default. Each adapter maps it to its own
   * setting (a turn parameter, a config value, a thinking level).
   */
  readonly effort?: string | null;
  /** The runtime mode for this turn. */
  readonly runtimeMode: RuntimeMode;
  /** The interaction mode for this turn. */
  readonly interactionMode: InteractionMode;
  /** Set when this turn restarts an interrupted one (steering by interrupt-and-restart). */
  readonly restartOfTurnId: string | null;
}

/** What `steerTurn` gets. @public */
export interface SteerInputV1 {
  /** The running turn to steer. */
  readonly turnId: string;
  /** The text to add. */
  readonly text: string;
}

/**
 * What a steer did, when the provider says so. `steerTurn` may resolve with nothing, which
 * means `delivered`; an undelivered steer rejects (the host then runs the text as a follow-up).
 * @experimental
 */
export interface SteerOutcomeV1 {
  /**
   * - `delivered`: the running turn takes the text as input.
   * - `handled`: the provider consumed the text itself (an extension's input handler), so it
   *   reaches no model, and running it again as a follow-up would repeat what the handler did.
   */
  readonly disposition: "delivered" | "handled";
  /** What the provider said, for the timeline. */
  readonly detail?: string;
}

/** What `interruptTurn` gets. @public */
export interface InterruptInputV1 {
  /** The running turn to interrupt. */
  readonly turnId: string;
  /** Why (shown in logs; some providers record it). */
  readonly reason?: string;
  /**
   * A hard stop was asked for (the user's Stop): the adapter may kill and respawn its process
   * instead of a soft cancel.
   */
  readonly hard?: boolean;
}

/** What `forkThread` gets. @public */
export interface ForkInputV1 {
  /** Cut the copy after this turn (host turn id); omit for the latest state. */
  readonly afterTurnId?: string;
}

/** The answer to a runtime request. @public */
export type RuntimeRequestResponseV1 =
  /** Decides an approval request. */
  | { readonly kind: "approval"; readonly decision: ApprovalDecisionV1 }
  /** Answers a user-input request: one entry per question id. */
  | { readonly kind: "user_input"; readonly answers: Readonly<Record<string, string | readonly string[]>> }
  /** Declines any request without an answer (the provider treats it as cancelled). */
  | { readonly kind: "dismiss" };

/** One turn in a provider's own record of a conversation. @public */
export interface SnapshotTurnV1 {
  /** The provider's turn id, if any. */
  readonly providerTurnId?: string;
  /** The user's text. */
  readonly userText: string;
  /** The assistant's final text. */
  readonly assistantText: string;
}

/** The provider's own record of a conversation. @public */
export interface ThreadSnapshotV1 {
  /** Turns, oldest first. */
  readonly turns: readonly SnapshotTurnV1[];
}

/**
 * One live conversation with a provider. An optional method exists only when its capability
 * is declared: leave it out otherwise, with no stub that only throws. The host reaches optional
 * methods only through its capability guard and the shared policy, and the guard refuses an
 * undeclared or absent one with `unsupported_capability` itself. Where a declared capability
 * covers only part of a method (approvals but no questions, a fork but not from a given turn),
 * the method rejects the part it does not cover with `unsupported_capability`.
 * @public
 */
export interface ProviderSessionV1 {
  /** The current resume cursor (for example the native thread id), or null before it is known. */
  readonly resumeCursor: string | null;
  /** Starts a turn. Resolves once the provider accepted it; output arrives as events. */
  startTurn(input: TurnInputV1): Promise<{ readonly providerTurnId?: string }>;
  /**
   * Adds input to a running turn. Needs `turns.activeSteering`. Resolving with a
   * {@link SteerOutcomeV1} (rather than nothing) is experimental, as that type is.
   */
  steerTurn?(input: SteerInputV1): Promise<void | SteerOutcomeV1>;
  /** Stops a running turn; a `turn.terminal` event follows. Needs `turns.interrupt`. */
  interruptTurn?(input: InterruptInputV1): Promise<void>;
  /** Copies the conversation into a new native thread. Needs `threads.fork`. */
  forkThread?(input: ForkInputV1): Promise<{ readonly resumeCursor: string }>;
  /** Answers a runtime request the session opened. Needs `runtimeRequests.*`. */
  respondToRuntimeRequest?(requestId: string, response: RuntimeRequestResponseV1): Promise<void>;
  /** Reads the provider's own record of the conversation. Needs `threads.readSnapshot`. */
  readSnapshot?(): Promise<ThreadSnapshotV1>;
  /**
   * Replaces the session's MCP grant (a rotated credential for the same endpoint), also during
   * a turn: later Switchyard tool calls must carry the new token. The old token stays valid for
   * a short overlap, so a call already on its way still succeeds. Needs `tools.mcpGrantUpdate`.
   */
  updateMcpGrant?(grant: McpEndpointGrantV1): Promise<void>;
  /** Ends the session and its process. Idempotent. */
  close(): Promise<void>;
}

/**
 * The OrchestrationAdapterV1 of one provider instance: what the host calls to run work on it.
 * One adapter per configured instance; it opens any number of sessions.
 * @public
 */
export interface OrchestrationAdapterV1 {
  /** Always `"v1"`. */
  readonly specificationVersion: "v1";
  /** The provider instance this adapter serves. */
  readonly instanceId: string;
  /** The driver that created it. */
  readonly driverKind: string;
  /**
   * What this instance can do. May refine the driver's static declaration after a probe (for
   * example capabilities an ACP agent advertised at `initialize`).
   */
  capabilities(): ProviderCapabilitiesV1;
  /**
   * Checks installation, executability, authentication and models. Never starts a model turn;
   * with `depth: "inspect"` it also starts no harness server or session and writes nothing into
   * the harness's home (see {@link ProbeDepthV1}).
   */
  probe(options?: ProbeOptionsV1): Promise<ProviderStatusV1>;
  /** Opens (or resumes, when `resumeCursor` is set) a session. */
  openSession(input: OpenSessionInputV1): Promise<ProviderSessionV1>;
  /** Releases everything the instance holds. Sessions are closed first by the host. */
  dispose?(): Promise<void>;
}
