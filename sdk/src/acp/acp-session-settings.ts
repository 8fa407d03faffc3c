import * as acp from "@agentclientprotocol/sdk/unstable";
import { SwitchyardError, type InteractionMode, type RuntimeMode, type TurnInput } from "@switchyard/spec";
import { agentModeIds, findConfigOption, planModeId, selectValues, sessionModelsOf } from "./acp-capabilities.js";
import type { AcpAgentDescription, AcpModeMapping, AcpSessionModels } from "./acp-flavor.js";

/** The earlier unstable ACP model switch, for agents that list `models` instead of a model config option. */
const SET_SESSION_MODEL_METHOD = "session/set_model";

/** What the settings need from their session. */
export interface AcpSettingsPort {
  /** Sends a setup request on the session's connection (with its timeout); `what` names it in errors. */
  call<T>(what: string, send: (agent: acp.ClientConnection["agent"], sessionId: string) => Promise<T>): Promise<T>;
  /** Reports a warning (about the turn, when given). */
  warn(message: string, turnId: string | undefined): void;
  /** Which agent modes stand for Switchyard's. */
  readonly mapping: AcpModeMapping | undefined;
}

/** What a session setup response (`session/new|load|resume`) says about modes and models. */
export type AcpSessionSetupResponse = {
  readonly modes?: acp.SessionModeState | null;
  readonly configOptions?: acp.SessionConfigOption[] | null;
};

/** The model and modes a session wants its agent in. */
export interface AcpWantedSettings {
  /** Null: the agent's own. */
  model: string | null;
  runtimeMode: RuntimeMode;
  interactionMode: InteractionMode;
}

/**
 * A session's model and modes: what it wants (the latest turn's), what the agent offers (its
 * modes, config options and older `models` list, kept current from its updates) and the
 * switches between the two. A model the agent cannot take is a warning, once per model; one it
 * does not offer is `invalid_input` when asked for strictly, and is not kept.
 */
export class AcpSessionSettings {
  readonly #wanted: AcpWantedSettings;
  #modes: acp.SessionModeState | null = null;
  #initialModeId: string | null = null;
  #configOptions: acp.SessionConfigOption[] | null = null;
  #sessionModels: AcpSessionModels | null = null;
  #warnedModel: string | null = null;

  constructor(
    private readonly port: AcpSettingsPort,
    wanted: AcpWantedSettings,
  ) {
    this.#wanted = { ...wanted };
  }

  /** What the session wants now. */
  get wanted(): Readonly<AcpWantedSettings> {
    return this.#wanted;
  }

  /** Brings a (re)started agent to the wanted model and modes; `strict`: a model it does not offer is an error. */
  async reapply(strict: boolean): Promise<void> {
    await this.applyModel(this.#wanted.model, undefined, strict);
    await this.applyModes(this.#wanted.runtimeMode, this.#wanted.interactionMode, undefined);
  }

  /** A turn's model (null keeps the session's) and modes become the wanted ones and are applied. */
  async applyTurn(input: TurnInput): Promise<void> {
    const model = input.model ?? this.#wanted.model;
    await this.applyModel(model, input.turnId, true);
    this.#wanted.model = model;
    await this.applyModes(input.runtimeMode, input.interactionMode, input.turnId);
    await this.applyEffort(input.effort ?? null);
  }

  /**
   * Sets the agent's `thought_level` config option to a turn's effort (null keeps the agent's).
   * The host only sends an effort the agent listed, so a missing option or value is a bug the
   * agent reports, named here.
   */
  async applyEffort(effort: string | null): Promise<void> {
    if (effort === null) return;
    const option = findConfigOption(this.#configOptions, "thought_level");
    if (option === undefined)
      throw new SwitchyardError(
        "unsupported_capability",
        `The agent offers no thought_level setting, so effort "${effort}" cannot be applied.`,
        { effort },
      );
    if (option.currentValue === effort) return;
    const values = selectValues(option);
    if (!values.includes(effort))
      throw new SwitchyardError(
        "invalid_input",
        `Effort "${effort}" is not offered by this agent (offered: ${values.join(", ")}).`,
        { effort, offered: values },
      );
    await this.#setConfigOption(option.id, effort);
  }

  /** Takes what a session setup reported; the first mode seen stays the session's initial one. */
  adopt(setup: AcpSessionSetupResponse): Omit<AcpAgentDescription, "initialize"> {
    this.#modes = setup.modes ?? null;
    this.#initialModeId ??= this.#modes?.currentModeId ?? null;
    this.#configOptions = setup.configOptions ?? null;
    this.#sessionModels = sessionModelsOf(setup);
    return { modes: this.#modes, configOptions: this.#configOptions, models: this.#sessionModels };
  }

  /** The agent switched modes itself. */
  modeChanged(currentModeId: string): void {
    if (this.#modes) this.#modes = { ...this.#modes, currentModeId };
  }

  /** The agent's config options changed. */
  configChanged(configOptions: acp.SessionConfigOption[]): void {
    this.#configOptions = configOptions;
  }

  /** Switches to `model` (null: keep the agent's). `strict`: a model the agent does not offer is an error. */
  async applyModel(model: string | null, turnId: string | undefined, strict: boolean): Promise<void> {
    if (model === null) return;
    const option = findConfigOption(this.#configOptions, "model");
    if (option === undefined && this.#sessionModels !== null && this.#sessionModels.availableModels.length > 0) {
      await this.#applySessionModel(this.#sessionModels, model, strict);
      return;
    }
    if (option === undefined) {
      if (this.#warnedModel !== model) {
        this.#warnedModel = model;
        this.port.warn(
          `The agent offers no model setting; model "${model}" was not applied and the agent's own model is used.`,
          turnId,
        );
      }
      return;
    }
    if (option.currentValue === model) return;
    const values = selectValues(option);
    if (!values.includes(model)) {
      if (!strict) return;
      throw new SwitchyardError(
        "invalid_input",
        `Model "${model}" is not offered by this agent (offered: ${values.join(", ")}).`,
        { model, offered: values },
      );
    }
    await this.#setConfigOption(option.id, model);
  }

  /**
   * Puts the agent in the mode for `interactionMode` and `runtimeMode`: its plan mode for a
   * plan turn (a warning when it has none), else the mapped (or same-named) runtime mode, else
   * its initial mode. Without such a mode the runtime mode is enforced by the permission answers.
   */
  async applyModes(
    runtimeMode: RuntimeMode,
    interactionMode: InteractionMode,
    turnId: string | undefined,
  ): Promise<void> {
    this.#wanted.runtimeMode = runtimeMode;
    this.#wanted.interactionMode = interactionMode;
    const description = { modes: this.#modes, configOptions: this.#configOptions };
    const mapping = this.port.mapping;
    const ids = agentModeIds(description);
    let target: string | null = null;
    if (interactionMode === "plan") {
      target = planModeId(description, mapping);
      if (target === null) this.port.warn("The agent has no plan mode; the turn runs in its default mode.", turnId);
    }
    if (target === null && ids.length > 0) {
      const mapped = mapping?.runtime?.[runtimeMode] ?? runtimeMode;
      if (ids.includes(mapped)) target = mapped;
      else if (this.#initialModeId !== null && this.#initialModeId !== planModeId(description, mapping))
        target = this.#initialModeId;
    }
    if (target === null) return;
    const modeId = target;
    if (this.#modes?.availableModes.some((mode) => mode.id === modeId)) {
      if (this.#modes.currentModeId === modeId) return;
      await this.port.call("session/set_mode", (agent, sessionId) =>
        agent.request(acp.methods.agent.session.setMode, { sessionId, modeId }),
      );
      this.#modes = { ...this.#modes, currentModeId: modeId };
      return;
    }
    const option = findConfigOption(this.#configOptions, "mode");
    if (option !== undefined && option.currentValue !== modeId) await this.#setConfigOption(option.id, modeId);
  }

  async #setConfigOption(configId: string, value: string): Promise<void> {
    const response = await this.port.call("session/set_config_option", (agent, sessionId) =>
      agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId, value }),
    );
    this.#configOptions = response.configOptions;
  }

  /** Switches the model through the session's `models` list (`session/set_model`). */
  async #applySessionModel(models: AcpSessionModels, model: string, strict: boolean): Promise<void> {
    if (models.currentModelId === model) return;
    const offered = models.availableModels.map((entry) => entry.modelId);
    if (!offered.includes(model)) {
      if (!strict) return;
      throw new SwitchyardError(
        "invalid_input",
        `Model "${model}" is not offered by this agent (offered: ${offered.join(", ")}).`,
        { model, offered },
      );
    }
    await this.port.call("session/set_model", (agent, sessionId) =>
      agent.request(SET_SESSION_MODEL_METHOD, { sessionId, modelId: model }),
    );
    this.#sessionModels = { ...models, currentModelId: model };
  }
}
