import {
  INTERACTION_MODES,
  RUNTIME_MODES,
  isInteractionMode,
  isRuntimeMode,
  type InteractionMode,
  type RuntimeMode,
} from "../modes.js";

/**
 * How far a guarantee holds, where a boolean would lie.
 * - `strong`: always true, and stable across restarts.
 * - `weak`: usually true, or true only within one process.
 * - `none`: not provided.
 * @public
 */
export type GuaranteeQualityV1 = "strong" | "weak" | "none";

const QUALITIES: readonly GuaranteeQualityV1[] = ["strong", "weak", "none"];

/** What a provider's sessions can do. @public */
export interface SessionCapabilitiesV1 {
  /** A closed session can be reopened from its resume cursor with the conversation intact. */
  readonly resume: boolean;
  /** The model can change between turns without opening a new session. */
  readonly modelSwitchInSession: boolean;
  /** The runtime mode can change between turns without opening a new session. */
  readonly runtimeModeSwitchInSession: boolean;
  /** Pending approvals and questions can still be answered after the host restarts. */
  readonly pendingRequestsSurviveRestart: boolean;
  /**
   * The session's harness runs with `OpenSessionInputV1.harnessHome` as its home (CODEX_HOME,
   * CLAUDE_CONFIG_DIR, ...) when one is given (a profile's `harnessHome`).
   */
  readonly harnessHome: boolean;
  /** The session's harness process gets `OpenSessionInputV1.environment` (a profile's `environment`). */
  readonly environment: boolean;
}

/** What a provider can do with whole threads (conversations). @public */
export interface ThreadCapabilitiesV1 {
  /** `readSnapshot` returns the provider's own record of the conversation. */
  readonly readSnapshot: boolean;
  /** `forkThread` copies the conversation natively into a new provider thread. */
  readonly fork: boolean;
  /** `forkThread` can cut the copy at a given turn (not only at the latest state). */
  readonly forkFromTurn: boolean;
}

/** What a provider can do with turns. @public */
export interface TurnCapabilitiesV1 {
  /** The provider reports when a turn actually starts (before any output). */
  readonly emitsTurnStarted: boolean;
  /** `interruptTurn` stops a running turn and the provider reports its terminal state. */
  readonly interrupt: boolean;
  /** `steerTurn` adds input to a running turn without stopping it. */
  readonly activeSteering: boolean;
  /**
   * A turn can be interrupted and restarted with new input in the same conversation. The
   * shared policy uses this when `activeSteering` is false.
   */
  readonly steeringByInterruptRestart: boolean;
  /** The provider itself can hold messages sent while a turn runs and play them afterwards. */
  readonly queuedMessages: boolean;
  /**
   * How reliably a turn reports its end. With `none` the host cannot tell when queued work may
   * start, so queueing behind an active turn is refused.
   */
  readonly terminalStatusQuality: GuaranteeQualityV1;
}

/** Which MCP transports the provider's harness can use as a client. @public */
export interface McpTransportCapabilitiesV1 {
  /** Streamable HTTP with headers (the Switchyard endpoint is reachable directly). */
  readonly http: boolean;
  /** Legacy HTTP+SSE. */
  readonly sse: boolean;
  /** A stdio command (Switchyard offers `switchyard mcp-bridge`). */
  readonly stdio: boolean;
}

/**
 * Which kinds of a profile's tool rules ({@link ToolRulesV1}) the harness enforces, by its own
 * tool names. A kind the harness cannot enforce is refused by the host's shared policy (or, for
 * `allow` rules alone, which only spare prompts, run without them and said so). @public
 */
export interface ToolRuleCapabilitiesV1 {
  /** Tools named by an allow rule run without asking. */
  readonly allow: boolean;
  /** Tools named by a deny rule are unavailable or refused, whatever the runtime mode. */
  readonly deny: boolean;
  /** Tools named by an ask rule raise an approval request each time, whatever the runtime mode. */
  readonly ask: boolean;
  /** `allowOnly`: the harness's own tools that no allow or ask rule names are unavailable. */
  readonly allowOnly: boolean;
}

/** What tools the provider's agent can use. @public */
export interface ToolCapabilitiesV1 {
  /** The agent runs shell commands itself. */
  readonly shell: boolean;
  /** MCP client transports; all false means the Switchyard tools cannot be injected. */
  readonly mcp: McpTransportCapabilitiesV1;
  /** The host can register tools whose calls come back to the host over the provider protocol. */
  readonly dynamicToolCallbacks: boolean;
  /**
   * A live session takes a new MCP grant (`updateMcpGrant`), even during a turn, so the host
   * can rotate its credential before the maximum lifetime. Without it the host renews the
   * credential by reopening a resumable session between turns, and a turn that outlives the
   * credential loses the Switchyard tools.
   */
  readonly mcpGrantUpdate: boolean;
  /** Which kinds of tool rules (`OpenSessionInputV1.toolRules`) the harness enforces. Missing: none. */
  readonly rules: ToolRuleCapabilitiesV1;
  /** The harness connects to `OpenSessionInputV1.mcpServers` too (a profile's extra MCP servers). */
  readonly extraMcpServers: boolean;
}

/** Which runtime requests (questions to the client) the provider raises. @public */
export interface RuntimeRequestCapabilitiesV1 {
  /** Approval requests for commands, edits, MCP elicitations or permissions. */
  readonly approvals: boolean;
  /** Structured questions to the user (user-input requests). */
  readonly userInputQuestions: boolean;
}

/** Provider-native sub-agents. Switchyard's own sub-agents are always orchestrator-owned threads. @public */
export interface SubagentCapabilitiesV1 {
  /**
   * - `none`: the provider has no sub-agents of its own.
   * - `observed`: it has them and reports them; the host only shows them.
   * - `full`: it reports them with their own thread ids and lifecycle.
   */
  readonly native: "none" | "observed" | "full";
  /** Native sub-agents carry a thread id the host can read. */
  readonly exposesChildThreadIds: boolean;
  /**
   * What Switchyard can do with a native sub-agent through the adapter. Missing means
   * `observe` when `native` is not `none` (reporting them is what `native` already claims),
   * else `none`. @experimental
   */
  readonly control: NativeSubagentControlV1;
  /** A finished native sub-agent's `subagent.observed` carries its own `usage`. @experimental */
  readonly reportsUsage: boolean;
  /** The adapter reports a native sub-agent's transcript as `subagent.message` events. @experimental */
  readonly reportsTranscript: boolean;
}

/**
 * How far Switchyard can govern a provider's own sub-agents, each level including the ones
 * before it:
 * - `none`: they are not reported;
 * - `observe`: they are reported (`subagent.observed`), never controlled;
 * - `stop`: one can also be stopped on its own, without stopping the parent's turn;
 * - `steer`: one can also be sent a message while it runs.
 * @experimental
 */
export type NativeSubagentControlV1 = "none" | "observe" | "stop" | "steer";

const NATIVE_SUBAGENT_CONTROLS: readonly NativeSubagentControlV1[] = ["none", "observe", "stop", "steer"];

/** How context reaches the provider. @public */
export interface ContextCapabilitiesV1 {
  /**
   * The provider takes instructions on a channel separate from the user's message
   * (system or developer prompt). Without it the host puts them into the first prompt.
   */
  readonly acceptsInstructions: boolean;
  /** Largest portable context (a handoff summary) worth sending in one prompt, in characters. */
  readonly maxHandoffChars: number;
}

/** How stable the provider's own identifiers are. @public */
export interface IdentityCapabilitiesV1 {
  /** Native thread ids (what a resume cursor holds). */
  readonly nativeThreadIds: GuaranteeQualityV1;
  /** Native turn ids. */
  readonly nativeTurnIds: GuaranteeQualityV1;
  /** Native item ids (messages, tool calls). */
  readonly nativeItemIds: GuaranteeQualityV1;
}

/**
 * How `orchestrator_capabilities` shortens a provider's model list (every call lands in the
 * agent's context). Custom, favorite and the caller's own models are always listed; search
 * reaches the rest, legacy models included.
 * - `all_current`: every current (non-legacy) model; for providers whose own list is short and
 *   curated (Codex, Grok).
 * - `first_n`: the first 8 current models in the user's order (the instance's custom and
 *   favorite models as configured, then the provider's order); for catalogs that can hold
 *   hundreds of models (OpenCode, Pi, ACP agents).
 * @public
 */
export type ModelShortListV1 = "all_current" | "first_n";

/** What a provider's model list is like. @public */
export interface ModelCapabilitiesV1 {
  /** How the short list is cut. Missing means `first_n`, the shorter list. */
  readonly shortList: ModelShortListV1;
}

/**
 * Everything a provider declares it can do, grouped. Shared code decides from this record
 * only; it never branches on a provider's name. Decode untrusted declarations with
 * {@link decodeCapabilities}: anything missing means the weaker guarantee.
 * @public
 */
export interface ProviderCapabilitiesV1 {
  /** Session lifecycle. */
  readonly sessions: SessionCapabilitiesV1;
  /** Whole-thread operations. */
  readonly threads: ThreadCapabilitiesV1;
  /** Turn control. */
  readonly turns: TurnCapabilitiesV1;
  /** Tools, including MCP transports. */
  readonly tools: ToolCapabilitiesV1;
  /** Approvals and questions. */
  readonly runtimeRequests: RuntimeRequestCapabilitiesV1;
  /** Provider-native sub-agents. */
  readonly subagents: SubagentCapabilitiesV1;
  /** Context delivery. */
  readonly context: ContextCapabilitiesV1;
  /** Identifier stability. */
  readonly identity: IdentityCapabilitiesV1;
  /** The model list. */
  readonly models: ModelCapabilitiesV1;
  /**
   * Runtime modes the provider can enforce. A mode it does not offer runs as
   * `approval-required`. Missing means only `approval-required`.
   */
  readonly runtimeModes: readonly RuntimeMode[];
  /** Interaction modes the provider offers. Missing means only `default`. */
  readonly interactionModes: readonly InteractionMode[];
}

/** A declaration as written by a plugin: any field may be left out. @public */
export type CapabilityDeclarationV1 = {
  readonly [K in keyof ProviderCapabilitiesV1]?: ProviderCapabilitiesV1[K] extends readonly unknown[]
    ? ProviderCapabilitiesV1[K]
    : ProviderCapabilitiesV1[K] extends object
      ? {
          readonly [F in keyof ProviderCapabilitiesV1[K]]?: ProviderCapabilitiesV1[K][F] extends object
            ? Partial<ProviderCapabilitiesV1[K][F]>
            : ProviderCapabilitiesV1[K][F];
        }
      : ProviderCapabilitiesV1[K];
};

/** Dotted names of the capabilities a typed `unsupported_capability` error can name. @public */
export type CapabilityNameV1 =
  | "sessions.resume"
  | "sessions.modelSwitchInSession"
  | "sessions.runtimeModeSwitchInSession"
  | "threads.readSnapshot"
  | "threads.fork"
  | "threads.forkFromTurn"
  | "turns.interrupt"
  | "turns.activeSteering"
  | "turns.steeringByInterruptRestart"
  | "turns.queuedMessages"
  | "turns.terminalStatusQuality"
  | "tools.mcp"
  | "tools.mcpGrantUpdate"
  | "tools.rules.allow"
  | "tools.rules.deny"
  | "tools.rules.ask"
  | "tools.rules.allowOnly"
  | "tools.extraMcpServers"
  | "sessions.harnessHome"
  | "sessions.environment"
  | "runtimeRequests.approvals"
  | "runtimeRequests.userInputQuestions";

/** The weakest record: what a provider that declares nothing gets. @public */
export const NO_CAPABILITIES: ProviderCapabilitiesV1 = Object.freeze({
  sessions: {
    resume: false,
    modelSwitchInSession: false,
    runtimeModeSwitchInSession: false,
    pendingRequestsSurviveRestart: false,
    harnessHome: false,
    environment: false,
  },
  threads: { readSnapshot: false, fork: false, forkFromTurn: false },
  turns: {
    emitsTurnStarted: false,
    interrupt: false,
    activeSteering: false,
    steeringByInterruptRestart: false,
    queuedMessages: false,
    terminalStatusQuality: "none",
  },
  tools: {
    shell: false,
    mcp: { http: false, sse: false, stdio: false },
    dynamicToolCallbacks: false,
    mcpGrantUpdate: false,
    rules: { allow: false, deny: false, ask: false, allowOnly: false },
    extraMcpServers: false,
  },
  runtimeRequests: { approvals: false, userInputQuestions: false },
  subagents: {
    native: "none",
    exposesChildThreadIds: false,
    control: "none",
    reportsUsage: false,
    reportsTranscript: false,
  },
  context: { acceptsInstructions: false, maxHandoffChars: 12_000 },
  identity: { nativeThreadIds: "none", nativeTurnIds: "none", nativeItemIds: "none" },
  models: { shortList: "first_n" },
  runtimeModes: ["approval-required"],
  interactionModes: ["default"],
} satisfies ProviderCapabilitiesV1);

/** The result of decoding a declaration: the record plus what was wrong with the input. @public */
export interface DecodedCapabilitiesV1 {
  /** The decoded record; every unknown or malformed field took its weakest value. */
  readonly capabilities: ProviderCapabilitiesV1;
  /** One line per field that was present but malformed (and so was weakened). */
  readonly warnings: readonly string[];
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * Decodes an untrusted capability declaration pessimistically: a missing field is the weaker
 * guarantee, a malformed one too (with a warning), so a stored or third-party declaration can
 * never overclaim.
 * @public
 */
export function decodeCapabilities(raw: unknown): DecodedCapabilitiesV1 {
  const warnings: string[] = [];
  const root = record(raw);

  const bool = (group: string, field: string): boolean => {
    const value = record(root[group])[field];
    if (value === undefined) return false;
    if (typeof value !== "boolean") {
      warnings.push(`${group}.${field}: expected a boolean, got ${JSON.stringify(value)}; treated as false`);
      return false;
    }
    return value;
  };
  const quality = (group: string, field: string): GuaranteeQualityV1 => {
    const value = record(root[group])[field];
    if (value === undefined) return "none";
    if (!QUALITIES.includes(value as GuaranteeQualityV1)) {
      warnings.push(`${group}.${field}: expected strong|weak|none, got ${JSON.stringify(value)}; treated as none`);
      return "none";
    }
    return value as GuaranteeQualityV1;
  };
  const modes = <T extends string>(
    field: string,
    isValid: (v: unknown) => v is T,
    fallback: readonly T[],
    order: readonly T[],
  ): readonly T[] => {
    const value = root[field];
    if (value === undefined) return fallback;
    if (!Array.isArray(value)) {
      warnings.push(`${field}: expected an array; treated as ${JSON.stringify(fallback)}`);
      return fallback;
    }
    const valid = value.filter(isValid);
    for (const bad of value.filter((v) => !isValid(v)))
      warnings.push(`${field}: unknown mode ${JSON.stringify(bad)} ignored`);
    const unique = order.filter((mode) => valid.includes(mode));
    return unique.length > 0 ? unique : fallback;
  };

  const mcp = record(record(root.tools).mcp);
  const mcpBool = (field: string): boolean => {
    const value = mcp[field];
    if (value === undefined) return false;
    if (typeof value !== "boolean") {
      warnings.push(`tools.mcp.${field}: expected a boolean; treated as false`);
      return false;
    }
    return value;
  };

  const rules = record(record(root.tools).rules);
  const ruleBool = (field: string): boolean => {
    const value = rules[field];
    if (value === undefined) return false;
    if (typeof value !== "boolean") {
      warnings.push(`tools.rules.${field}: expected a boolean; treated as false`);
      return false;
    }
    return value;
  };

  const nativeSubagents = record(root.subagents).native;
  let native: SubagentCapabilitiesV1["native"] = "none";
  if (nativeSubagents === "observed" || nativeSubagents === "full") native = nativeSubagents;
  else if (nativeSubagents !== undefined && nativeSubagents !== "none") {
    warnings.push(
      `subagents.native: expected none|observed|full, got ${JSON.stringify(nativeSubagents)}; treated as none`,
    );
  }

  // Control, usage and transcript are about reported sub-agents: none of them without `native`.
  const controlRaw = record(root.subagents).control;
  let control: NativeSubagentControlV1 = native === "none" ? "none" : "observe";
  if (NATIVE_SUBAGENT_CONTROLS.includes(controlRaw as NativeSubagentControlV1)) {
    if (native === "none" && controlRaw !== "none")
      warnings.push(`subagents.control: ${JSON.stringify(controlRaw)} without subagents.native; treated as none`);
    else control = controlRaw as NativeSubagentControlV1;
  } else if (controlRaw !== undefined) {
    warnings.push(
      `subagents.control: expected none|observe|stop|steer, got ${JSON.stringify(controlRaw)}; treated as ${control}`,
    );
  }
  const reported = (field: "reportsUsage" | "reportsTranscript"): boolean => {
    const value = bool("subagents", field);
    if (value && native === "none") {
      warnings.push(`subagents.${field} without subagents.native; treated as false`);
      return false;
    }
    return value;
  };

  const shortListRaw = record(root.models).shortList;
  let shortList: ModelShortListV1 = NO_CAPABILITIES.models.shortList;
  if (shortListRaw === "all_current" || shortListRaw === "first_n") shortList = shortListRaw;
  else if (shortListRaw !== undefined)
    warnings.push(
      `models.shortList: expected all_current|first_n, got ${JSON.stringify(shortListRaw)}; treated as first_n`,
    );

  const maxHandoffRaw = record(root.context).maxHandoffChars;
  let maxHandoffChars = NO_CAPABILITIES.context.maxHandoffChars;
  if (typeof maxHandoffRaw === "number" && Number.isFinite(maxHandoffRaw) && maxHandoffRaw > 0)
    maxHandoffChars = Math.floor(maxHandoffRaw);
  else if (maxHandoffRaw !== undefined)
    warnings.push("context.maxHandoffChars: expected a positive number; default used");

  const capabilities: ProviderCapabilitiesV1 = {
    sessions: {
      resume: bool("sessions", "resume"),
      modelSwitchInSession: bool("sessions", "modelSwitchInSession"),
      runtimeModeSwitchInSession: bool("sessions", "runtimeModeSwitchInSession"),
      pendingRequestsSurviveRestart: bool("sessions", "pendingRequestsSurviveRestart"),
      harnessHome: bool("sessions", "harnessHome"),
      environment: bool("sessions", "environment"),
    },
    threads: {
      readSnapshot: bool("threads", "readSnapshot"),
      fork: bool("threads", "fork"),
      forkFromTurn: bool("threads", "forkFromTurn"),
    },
    turns: {
      emitsTurnStarted: bool("turns", "emitsTurnStarted"),
      interrupt: bool("turns", "interrupt"),
      activeSteering: bool("turns", "activeSteering"),
      steeringByInterruptRestart: bool("turns", "steeringByInterruptRestart"),
      queuedMessages: bool("turns", "queuedMessages"),
      terminalStatusQuality: quality("turns", "terminalStatusQuality"),
    },
    tools: {
      shell: bool("tools", "shell"),
      mcp: { http: mcpBool("http"), sse: mcpBool("sse"), stdio: mcpBool("stdio") },
      dynamicToolCallbacks: bool("tools", "dynamicToolCallbacks"),
      mcpGrantUpdate: bool("tools", "mcpGrantUpdate"),
      rules: {
        allow: ruleBool("allow"),
        deny: ruleBool("deny"),
        ask: ruleBool("ask"),
        allowOnly: ruleBool("allowOnly"),
      },
      extraMcpServers: bool("tools", "extraMcpServers"),
    },
    runtimeRequests: {
      approvals: bool("runtimeRequests", "approvals"),
      userInputQuestions: bool("runtimeRequests", "userInputQuestions"),
    },
    subagents: {
      native,
      exposesChildThreadIds: bool("subagents", "exposesChildThreadIds"),
      control,
      reportsUsage: reported("reportsUsage"),
      reportsTranscript: reported("reportsTranscript"),
    },
    context: { acceptsInstructions: bool("context", "acceptsInstructions"), maxHandoffChars },
    identity: {
      nativeThreadIds: quality("identity", "nativeThreadIds"),
      nativeTurnIds: quality("identity", "nativeTurnIds"),
      nativeItemIds: quality("identity", "nativeItemIds"),
    },
    models: { shortList },
    runtimeModes: modes("runtimeModes", isRuntimeMode, NO_CAPABILITIES.runtimeModes, RUNTIME_MODES),
    interactionModes: modes("interactionModes", isInteractionMode, NO_CAPABILITIES.interactionModes, INTERACTION_MODES),
  };
  // A fork from a turn is a fork; steering by restart needs an interrupt. Keep the record
  // internally consistent so the policy never trusts half a capability.
  if (capabilities.threads.forkFromTurn && !capabilities.threads.fork) {
    warnings.push("threads.forkFromTurn without threads.fork; treated as false");
    (capabilities.threads as { forkFromTurn: boolean }).forkFromTurn = false;
  }
  if (capabilities.turns.steeringByInterruptRestart && !capabilities.turns.interrupt) {
    warnings.push("turns.steeringByInterruptRestart without turns.interrupt; treated as false");
    (capabilities.turns as { steeringByInterruptRestart: boolean }).steeringByInterruptRestart = false;
  }
  return { capabilities, warnings };
}

/**
 * Overlays a partial declaration on a complete record (for example, capabilities an ACP agent
 * negotiated at `initialize` on top of a flavor's static declaration), then decodes the result.
 * @public
 */
export function mergeCapabilities(
  base: ProviderCapabilitiesV1,
  overlay: CapabilityDeclarationV1,
): DecodedCapabilitiesV1 {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(overlay)) {
    if (value === undefined) continue;
    const current = merged[key];
    if (Array.isArray(value) || typeof value !== "object" || value === null) merged[key] = value;
    else {
      const next: Record<string, unknown> = { ...record(current) };
      for (const [field, fieldValue] of Object.entries(value)) {
        if (fieldValue === undefined) continue;
        const currentField = next[field];
        next[field] =
          typeof fieldValue === "object" && fieldValue !== null && !Array.isArray(fieldValue)
            ? { ...record(currentField), ...fieldValue }
            : fieldValue;
      }
      merged[key] = next;
    }
  }
  return decodeCapabilities(merged);
}
