import type * as acp from "@agentclientprotocol/sdk/unstable";
import type {
  AdapterEvent,
  ApprovalRequest,
  CapabilityDeclaration,
  InteractionMode,
  ModelDescriptor,
  OptionsSchema,
  PluginContext,
  PluginLogger,
  ProbeDepth,
  ProviderInstanceDescriptor,
  RuntimeMode,
  ToolKind,
  UserInputRequest,
} from "@switchyard/spec";
import type { HarnessSpec, RuntimeRequestOutcome } from "../harness/index.js";

/** How to start an ACP agent: a command line plus extra environment. Never put secrets in `args`. @public */
export interface AcpLaunchCommand {
  /** The executable (a name on PATH or an absolute path). */
  readonly command: string;
  /** Its arguments. */
  readonly args: readonly string[];
  /** Environment added on top of the instance's own (`ProviderInstanceDescriptor.environment`). */
  readonly env?: Readonly<Record<string, string>>;
}

/** What a flavor gets to resolve its launch command. @public */
export interface AcpLaunchInput<TOptions> {
  /** The configured instance. */
  readonly instance: ProviderInstanceDescriptor;
  /** The driver options, already validated. */
  readonly options: TOptions;
  /** The session's working directory, or null for a status probe. */
  readonly cwd: string | null;
  /** Why the agent is started. */
  readonly purpose: "probe" | "session";
  /**
   * For a probe, how deep it goes. With `inspect` the flavor must not use the network or write
   * anything (read caches only); nothing is started either way. Absent for sessions.
   */
  readonly depth?: ProbeDepth;
  /** The plugin context of the instance (paths, logger), for flavors that resolve through it. */
  readonly context: PluginContext;
  /**
   * For a session, its profile's harness home (in place of the instance's `homePath`), given
   * only where the flavor declares `sessions.harnessHome`: the flavor puts it in its own
   * variable (GROK_HOME…). The profile's `environment` needs nothing from the flavor: the
   * shared adapter lays it over the instance's where `sessions.environment` is declared.
   */
  readonly harnessHome?: string | null;
}

/**
 * A running agent as the shared adapter sees it: an ACP message stream plus a way to stop it.
 * The default comes from `PluginContext.process.spawn` (own process group); tests may inject one.
 * @public
 */
export interface AcpChannel {
  /** The ACP message stream (for example `acp.ndJsonStream(stdin, stdout)`). */
  readonly stream: acp.Stream;
  /** The process id, when there is a process. */
  readonly pid?: number;
  /** Settles when the agent is gone. */
  readonly exited: Promise<{ readonly exitCode: number | null; readonly signal: string | null }>;
  /** Stops the agent (its whole process group). Resolves when it is gone. */
  kill(): Promise<void>;
  /** The last lines the agent wrote to stderr, for error messages. */
  stderrTail?(): string;
}

/** Starts an agent for the shared adapter. Replaces the default `context.process.spawn` path. @public */
export type AcpChannelFactory = (
  launch: AcpLaunchCommand,
  options: {
    readonly cwd: string;
    readonly env: Readonly<Record<string, string>>;
    readonly label: string;
    readonly context: PluginContext;
  },
) => AcpChannel | Promise<AcpChannel>;

/** What the agent told us at `initialize` (and, once a session is open, at session setup). @public */
export interface AcpAgentDescription {
  /** The `initialize` response. */
  readonly initialize: acp.InitializeResponse;
  /** Modes of the latest session, when the agent reported them. */
  readonly modes?: acp.SessionModeState | null;
  /** Config options of the latest session, when the agent reported them. */
  readonly configOptions?: readonly acp.SessionConfigOption[] | null;
  /**
   * The session's `models` field, when the agent sends one: the earlier unstable ACP model
   * list (`{currentModelId, availableModels}`) that some agents still send instead of (or
   * besides) a `model` config option. Switched with `session/set_model`.
   */
  readonly models?: AcpSessionModels | null;
}

/** The earlier unstable ACP model state (`NewSessionResponse.models`), read defensively. @public */
export interface AcpSessionModels {
  /** The model in use. */
  readonly currentModelId: string;
  /** The models the agent offers. */
  readonly availableModels: readonly {
    readonly modelId: string;
    readonly name: string;
    readonly description?: string | null;
  }[];
}

/**
 * Which agent mode ids stand for Switchyard's runtime and interaction modes. Without an entry
 * the adapter looks for a mode whose id equals the Switchyard name (`plan`, `full-access`…);
 * without such a mode the runtime mode is still enforced at the client boundary (permission
 * answers), and plan mode is not offered.
 * @public
 */
export interface AcpModeMapping {
  /** Agent mode id per runtime mode. */
  readonly runtime?: Partial<Readonly<Record<RuntimeMode, string>>>;
  /** Agent mode id for the `plan` interaction mode. */
  readonly plan?: string;
}

/**
 * The outcome of a runtime request the adapter opened on behalf of a flavor: the kit's
 * {@link RuntimeRequestOutcome} (a dismissal is `cancelled`, never an answer).
 * @public
 */
export type AcpRuntimeRequestOutcome = RuntimeRequestOutcome;

/** The turn currently running in a session. @public */
export interface AcpTurnView {
  /** The host's turn id. */
  readonly turnId: string;
  /** The runtime mode of the turn. */
  readonly runtimeMode: RuntimeMode;
  /** The interaction mode of the turn. */
  readonly interactionMode: InteractionMode;
}

/**
 * What flavor extension handlers and hooks may do with a session. Everything that emits goes
 * through the session's serial queue, so it stays ordered with `session/update` processing.
 * @public
 */
export interface AcpSessionHandle {
  /** The host's provider session id. */
  readonly providerSessionId: string;
  /** The Switchyard thread. */
  readonly threadId: string;
  /** The ACP session id, once known. */
  readonly acpSessionId: string | null;
  /** The session's working directory. */
  readonly cwd: string;
  /** The running turn, if any. */
  readonly activeTurn: AcpTurnView | null;
  /** Logger bound to the session. */
  readonly logger: PluginLogger;
  /** Emits an event, in order with the session's other events. */
  emit(event: AdapterEvent): void;
  /** A fresh item id for the turn (`<turnId>:<prefix>:<n>`). */
  newItemId(turnId: string, prefix: string): string;
  /**
   * Opens a runtime request (`runtime_request.opened`) for `turnId` and waits for the host's
   * answer through `respondToRuntimeRequest`. Resolves `cancelled` when the host dismisses it,
   * the turn ends first, the session closes or `signal` aborts.
   */
  openRuntimeRequest(
    turnId: string,
    request: ApprovalRequest | UserInputRequest,
    options?: { readonly signal?: AbortSignal },
  ): Promise<AcpRuntimeRequestOutcome>;
}

/** What an extension request or notification handler gets. @public */
export interface AcpExtensionInput {
  /** The JSON-RPC method, as the agent sent it. */
  readonly method: string;
  /** Raw params; validate them yourself. */
  readonly params: unknown;
  /** The session the message belongs to, or null when it names none we know. */
  readonly session: AcpSessionHandle | null;
  /** Aborts when the agent cancels the request or the connection closes. */
  readonly signal: AbortSignal;
}

/** Custom (`_`-prefixed) methods a flavor answers, registered through the SDK's fallback handlers. @public */
export interface AcpExtensions {
  /** Request handlers by method name. Their return value is the JSON-RPC result. */
  readonly requests?: Readonly<Record<string, (input: AcpExtensionInput) => Promise<unknown> | unknown>>;
  /** Notification handlers by method name. */
  readonly notifications?: Readonly<Record<string, (input: AcpExtensionInput) => Promise<void> | void>>;
}

/** Optional hooks; each one refines a default the shared adapter already has. @public */
export interface AcpFlavorHooks<TOptions> {
  /**
   * Rewrites what the agent advertised at `initialize` before anything uses it (negotiation,
   * MCP injection, session reload), for example to ignore a feature the agent advertises but
   * cannot deliver. Runs on every `initialize` (probes and sessions).
   */
  adjustInitialize?(init: acp.InitializeResponse, input: { readonly options: TOptions }): acp.InitializeResponse;
  /**
   * Adjusts the capabilities negotiated at `initialize` (for example, to switch off a feature
   * the agent advertises but the flavor knows to be broken). Runs after negotiation.
   */
  refineCapabilities?(negotiated: CapabilityDeclaration, agent: AcpAgentDescription): CapabilityDeclaration;
  /** `_meta` for `session/new`, `session/load` and `session/resume`. */
  sessionMeta?(input: {
    readonly options: TOptions;
    readonly runtimeMode: RuntimeMode;
    readonly interactionMode: InteractionMode;
  }): Record<string, unknown> | undefined;
  /** Classifies a tool call; return undefined for the default mapping from the ACP kind. */
  toolKind?(toolCall: acp.ToolCall | acp.ToolCallUpdate): ToolKind | undefined;
  /**
   * Sees every `session/update` of an active turn first; return true when it handled the
   * update (the default mapping then skips it).
   */
  onSessionUpdate?(update: acp.SessionUpdate, session: AcpSessionHandle): boolean;
}

/**
 * One ACP-speaking provider: what differs between ACP agents, as data and small functions.
 * `createAcpDriver(flavor)` turns it into a Switchyard driver.
 * @public
 */
export interface AcpFlavor<TOptions = unknown> {
  /** The driver kind (`grok`, `acp-registry`). */
  readonly driverKind: string;
  /** Name for people. */
  readonly displayName: string;
  /** How a user installs the agent, for the message when its command is not found (`Install it: npm i -g …`). */
  readonly install?: string;
  /**
   * The agent program as the sdk's harness data (name, npm packages, tested versions), when the
   * flavor knows it; a function when it depends on the instance's options (a registry flavor
   * whose instances name different agents). With it, `probe()` reports `harness` (where the
   * launch points, the version the agent gave at `initialize`, the tested range) and warns about
   * a version outside the tested range.
   */
  readonly harness?: HarnessSpec | ((input: { readonly options: TOptions }) => HarnessSpec | undefined);
  /** Validates the driver options. */
  readonly optionsSchema?: OptionsSchema<TOptions>;
  /**
   * The static declaration, before any negotiation. What the agent advertises at `initialize`
   * then overrides the negotiable fields (resume, snapshot, fork, MCP transports, model and
   * mode switching).
   */
  readonly capabilities: CapabilityDeclaration;
  /** How to start the agent. */
  resolveLaunch(input: AcpLaunchInput<TOptions>): AcpLaunchCommand | Promise<AcpLaunchCommand>;
  /**
   * The `authenticate` method id to use when the agent lists auth methods, or undefined to
   * try without (the agent's own cached login). Called with the methods it advertised.
   */
  authMethodId?(input: {
    readonly options: TOptions;
    readonly authMethods: readonly acp.AuthMethod[];
  }): string | undefined;
  /**
   * How the Switchyard MCP endpoint is injected:
   * - `auto` (default): an `http` entry with the bearer header when the agent advertises
   *   `mcpCapabilities.http`, else the stdio bridge;
   * - `stdio-bridge`: always the stdio bridge (for agents that drop injected http servers).
   */
  readonly mcpTransport?: "auto" | "stdio-bridge";
  /**
   * What a hard interrupt (the user's Stop) does: `respawn` kills the agent's process group and
   * starts it again (reloading the session when the agent can); `cancel` (default) sends
   * `session/cancel` like a soft interrupt.
   */
  readonly hardInterrupt?: "respawn" | "cancel";
  /**
   * Agent mode ids for Switchyard modes; a function when they depend on the instance's options
   * (a generic flavor whose agents' mode names only the operator knows).
   */
  readonly modes?: AcpModeMapping | ((input: { readonly options: TOptions }) => AcpModeMapping | undefined);
  /** Models to list in `probe()` besides the instance's custom models. */
  readonly models?: readonly ModelDescriptor[];
  /** Custom methods the agent calls on the client. */
  readonly extensions?: AcpExtensions;
  /** Hooks. */
  readonly hooks?: AcpFlavorHooks<TOptions>;
  /**
   * How `probe()` proves readiness:
   * - `initialize` (default): start the agent and send `initialize`; `authenticated` is known
   *   only when the agent lists no auth methods;
   * - `session`: also `authenticate` (with `authMethodId`) and open a disposable `session/new`
   *   (no MCP servers, an empty temporary cwd), then close it. Success proves the agent is
   *   authenticated; the session's modes, config options and models refine `capabilities()`
   *   and the status' model list. No prompt is sent, so no model is called.
   */
  readonly readinessProbe?: "initialize" | "session";
  /** How long `initialize`, `session/new|load|resume` and other setup calls may take (default 30 s). */
  readonly setupTimeoutMs?: number;
  /**
   * How long a soft interrupt waits for the agent to end the prompt before the adapter gives up
   * on it (respawning when `hardInterrupt` is `respawn`, else ending the turn itself). Default 15 s.
   */
  readonly cancelTimeoutMs?: number;
}

/** The mode mapping a flavor uses for an instance's options. @public */
export function modeMappingOf<TOptions>(
  flavor: Pick<AcpFlavor<TOptions>, "modes">,
  options: TOptions,
): AcpModeMapping | undefined {
  return typeof flavor.modes === "function" ? flavor.modes({ options }) : flavor.modes;
}
