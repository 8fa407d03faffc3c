import type * as acp from "@agentclientprotocol/sdk/unstable";
import {
  RUNTIME_MODES,
  type CapabilityDeclaration,
  type InteractionMode,
  type ModelDescriptor,
} from "@switchyard/spec";
import type { AcpAgentDescription, AcpModeMapping, AcpSessionModels } from "./acp-flavor.js";

/**
 * What every ACP agent gets before negotiation: the protocol's own guarantees, nothing more.
 * - ACP has no steering: `turns.activeSteering` false; steering degrades to interrupt-and-restart
 *   (`session/cancel` then a new prompt).
 * - Every `session/prompt` ends with exactly one response (or the connection drops, which the
 *   adapter turns into a failed terminal), so terminal status is `strong`.
 * - ACP has no system prompt: instructions travel in the first prompt.
 * - Runtime modes are enforced at the client boundary (permission answers), so all three are
 *   offered; the switch between turns is declared only when the agent has modes to switch.
 * @public
 */
export const ACP_BASE_CAPABILITIES: CapabilityDeclaration = Object.freeze({
  sessions: {
    resume: false,
    modelSwitchInSession: false,
    runtimeModeSwitchInSession: false,
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
  tools: { shell: false, mcp: { http: false, sse: false, stdio: true }, dynamicToolCallbacks: false },
  runtimeRequests: { approvals: true, userInputQuestions: false },
  subagents: { native: "none", exposesChildThreadIds: false },
  context: { acceptsInstructions: false },
  identity: { nativeThreadIds: "weak", nativeTurnIds: "none", nativeItemIds: "weak" },
  runtimeModes: [...RUNTIME_MODES],
  interactionModes: ["default"],
} satisfies CapabilityDeclaration);

/** The agent mode id that stands for plan mode, if the agent has one. @public */
export function planModeId(
  agent: Pick<AcpAgentDescription, "modes" | "configOptions">,
  mapping: AcpModeMapping | undefined,
): string | null {
  const ids = agentModeIds(agent);
  const wanted = mapping?.plan ?? "plan";
  return ids.includes(wanted) ? wanted : null;
}

/** Every mode id the agent offers, through `modes` or a config option of category `mode`. @public */
export function agentModeIds(agent: Pick<AcpAgentDescription, "modes" | "configOptions">): string[] {
  const fromModes = agent.modes?.availableModes.map((mode) => mode.id) ?? [];
  const option = findConfigOption(agent.configOptions, "mode");
  return [...fromModes, ...(option ? selectValues(option) : [])];
}

/** The first select config option of a category (`model`, `mode`). @public */
export function findConfigOption(
  options: readonly acp.SessionConfigOption[] | null | undefined,
  category: string,
): (acp.SessionConfigOption & { type: "select" }) | undefined {
  return options?.find(
    (option): option is acp.SessionConfigOption & { type: "select" } =>
      option.category === category && option.type === "select",
  );
}

/** The values a select option accepts (groups flattened). @public */
export function selectValues(option: acp.SessionConfigOption & { type: "select" }): string[] {
  const values: string[] = [];
  for (const entry of option.options) {
    if ("group" in entry) for (const inner of entry.options) values.push(inner.value);
    else values.push(entry.value);
  }
  return values;
}

/**
 * The `models` field of a session setup response (the earlier unstable ACP shape), or null
 * when the response has none or it is malformed. The SDK's v1 types no longer name the field,
 * so it is read from the raw response.
 * @public
 */
export function sessionModelsOf(response: unknown): AcpSessionModels | null {
  if (typeof response !== "object" || response === null) return null;
  const models = (response as { models?: unknown }).models;
  if (typeof models !== "object" || models === null) return null;
  const { currentModelId, availableModels } = models as { currentModelId?: unknown; availableModels?: unknown };
  if (typeof currentModelId !== "string" || !Array.isArray(availableModels)) return null;
  const available: { modelId: string; name: string; description?: string | null }[] = [];
  for (const entry of availableModels as unknown[]) {
    if (typeof entry !== "object" || entry === null) continue;
    const { modelId, name, description } = entry as { modelId?: unknown; name?: unknown; description?: unknown };
    if (typeof modelId !== "string" || modelId.length === 0) continue;
    available.push({
      modelId,
      name: typeof name === "string" ? name : modelId,
      ...(typeof description === "string" ? { description } : {}),
    });
  }
  return { currentModelId, availableModels: available };
}

/**
 * The models an agent advertised for its latest session: the values of its `model` config
 * option, else its `models` list. The current one is marked `isDefault`. All are the agent's
 * own catalog (`harness_catalog`): ACP does not say whether the agent's endpoint serves them.
 * @public
 */
export function advertisedModels(
  agent: Pick<AcpAgentDescription, "configOptions" | "models"> | null,
): ModelDescriptor[] {
  if (agent === null) return [];
  const efforts = advertisedEfforts(agent);
  const option = findConfigOption(agent.configOptions, "model");
  if (option !== undefined) {
    const models: ModelDescriptor[] = [];
    for (const entry of option.options) {
      for (const value of "group" in entry ? entry.options : [entry]) {
        models.push({
          id: value.value,
          displayName: value.name,
          ...(value.value === option.currentValue ? { isDefault: true } : {}),
          source: "harness_catalog",
          ...efforts,
        });
      }
    }
    return models;
  }
  return (agent.models?.availableModels ?? []).map((model) => ({
    id: model.modelId,
    displayName: model.name,
    ...(model.modelId === agent.models?.currentModelId ? { isDefault: true } : {}),
    source: "harness_catalog" as const,
    ...efforts,
  }));
}

/**
 * The efforts an agent takes: the values of its `thought_level` config option (ACP's category
 * for reasoning effort), offered for every model it lists, since ACP does not tie the option
 * to a model. An agent without one takes no effort setting.
 * @public
 */
export function advertisedEfforts(
  agent: Pick<AcpAgentDescription, "configOptions">,
): Pick<ModelDescriptor, "efforts" | "defaultEffort"> {
  const option = findConfigOption(agent.configOptions, "thought_level");
  if (option === undefined) return {};
  const values = selectValues(option);
  if (values.length === 0) return {};
  return {
    efforts: values,
    ...(typeof option.currentValue === "string" && values.includes(option.currentValue)
      ? { defaultEffort: option.currentValue }
      : {}),
  };
}

/**
 * The capability overlay an agent earns at `initialize` (and at session setup, when `modes` or
 * `configOptions` are known). Merge it over the flavor's static declaration with
 * `mergeCapabilities`.
 * - `loadSession` → `sessions.resume` and `threads.readSnapshot` (the load replays history);
 * - `sessionCapabilities.resume` → `sessions.resume` (no replay, so no snapshot);
 * - `sessionCapabilities.fork` (`/unstable` `session/fork`) → `threads.fork`, never
 *   `threads.forkFromTurn` (ACP forks copy the latest state);
 * - `mcpCapabilities.http|sse` → `tools.mcp.http|sse`; stdio is the ACP baseline;
 * - `sessionCapabilities.subagents` (the subagent sessions draft, `{}` as codex-acp 2.x sends it;
 *   the client advertises `subagents`) → `subagents.native: "observed"`, `control: "observe"`,
 *   `reportsTranscript`: its `subagent_update`s are reported, with the model and assistant text
 *   of the child's own session; a child's session id is not a thread the host can read;
 * - a `model` config option (or a session `models` list, switched with `session/set_model`)
 *   → `sessions.modelSwitchInSession`;
 * - session modes (or a `mode` config option) → `sessions.runtimeModeSwitchInSession`, and
 *   `plan` among the interaction modes when a plan mode exists.
 * @public
 */
export function negotiateAcpCapabilities(agent: AcpAgentDescription, mapping?: AcpModeMapping): CapabilityDeclaration {
  const caps = agent.initialize.agentCapabilities ?? {};
  const sessionCaps = caps.sessionCapabilities ?? {};
  const loadSession = caps.loadSession === true;
  const resume = loadSession || (sessionCaps.resume !== undefined && sessionCaps.resume !== null);
  const fork = sessionCaps.fork !== undefined && sessionCaps.fork !== null;
  // Not in the SDK's schema yet (the draft names only the client's side); read from the wire.
  const subagentsCap = (sessionCaps as { readonly subagents?: unknown }).subagents;
  const subagents = typeof subagentsCap === "object" && subagentsCap !== null;
  const overlay: {
    sessions: { resume: boolean; modelSwitchInSession?: boolean; runtimeModeSwitchInSession?: boolean };
    threads: { readSnapshot: boolean; fork: boolean; forkFromTurn: boolean };
    tools: { mcp: { http: boolean; sse: boolean; stdio: boolean } };
    subagents: {
      native: "none" | "observed";
      control: "none" | "observe";
      reportsUsage: false;
      reportsTranscript: boolean;
      exposesChildThreadIds: false;
    };
    identity: { nativeThreadIds: "strong" | "weak" };
    interactionModes?: InteractionMode[];
  } = {
    sessions: { resume },
    threads: { readSnapshot: loadSession, fork, forkFromTurn: false },
    tools: { mcp: { http: caps.mcpCapabilities?.http === true, sse: caps.mcpCapabilities?.sse === true, stdio: true } },
    // Observed only: the draft gives no way to stop or steer one child, nor its usage. Its
    // transcript is its own session's assistant text, which the agent streams to the client.
    subagents: {
      native: subagents ? "observed" : "none",
      control: subagents ? "observe" : "none",
      reportsUsage: false,
      reportsTranscript: subagents,
      exposesChildThreadIds: false,
    },
    // A session id that can be loaded or resumed survives the agent process.
    identity: { nativeThreadIds: resume ? "strong" : "weak" },
  };
  const sessionKnown = agent.modes !== undefined || agent.configOptions !== undefined || agent.models !== undefined;
  if (sessionKnown) {
    overlay.sessions.modelSwitchInSession =
      findConfigOption(agent.configOptions, "model") !== undefined || (agent.models?.availableModels.length ?? 0) > 0;
    overlay.sessions.runtimeModeSwitchInSession = agentModeIds(agent).length > 0;
    overlay.interactionModes = planModeId(agent, mapping) !== null ? ["plan", "default"] : ["default"];
  }
  return overlay;
}
