import type { Project, ProviderModel, ProviderSummary, SessionView } from "../api/types.js";

/** The API's runtime modes, narrowest first (a provider that lists none offers all of them). */
export const RUNTIME_MODES = ["approval-required", "auto-accept-edits", "full-access"] as const;
export type RuntimeMode = (typeof RUNTIME_MODES)[number];

/** The API's interaction modes, narrowest first. */
export const INTERACTION_MODES = ["plan", "default"] as const;
export type InteractionMode = (typeof INTERACTION_MODES)[number];

/** Each mode's name in the picker. */
export const MODE_LABELS: Readonly<Record<RuntimeMode | InteractionMode, string>> = {
  "approval-required": "Approval required",
  "auto-accept-edits": "Auto-accept edits",
  "full-access": "Full access",
  plan: "Plan first",
  default: "Default",
};

/** What each mode lets the agent do, said under the picker. */
export const MODE_HINTS: Readonly<Record<RuntimeMode | InteractionMode, string>> = {
  "approval-required": "The agent asks before it edits files or runs commands.",
  "auto-accept-edits": "The agent edits files on its own and asks before it runs commands.",
  "full-access": "The agent edits and runs commands without asking.",
  plan: "The agent proposes a plan before it acts.",
  default: "The agent works as its provider does by default.",
};

/** One mode of a picker: whether this session may choose it, and why not. */
export interface ModeChoice<M extends string> {
  readonly mode: M;
  readonly allowed: boolean;
  readonly why: string | null;
}

function choices<M extends string>(
  all: readonly M[],
  offered: readonly string[] | undefined,
  ceiling: M | null,
  what: string,
): ModeChoice<M>[] {
  const limit = ceiling === null ? all.length - 1 : all.indexOf(ceiling);
  return all
    .filter((mode) => offered === undefined || offered.includes(mode))
    .map((mode) => {
      const allowed = all.indexOf(mode) <= limit;
      return { mode, allowed, why: allowed ? null : `above this session's ${what} ceiling, ${ceiling}` };
    });
}

/** The runtime modes the provider offers, each allowed when within the session's ceiling. */
export function runtimeModeChoices(provider: ProviderSummary, session: SessionView): ModeChoice<RuntimeMode>[] {
  return choices(
    RUNTIME_MODES,
    provider.runtimeModes,
    (session.ceiling?.runtimeMode as RuntimeMode | undefined) ?? null,
    "runtime",
  );
}

/** The interaction modes the provider offers, each allowed when within the session's ceiling. */
export function interactionModeChoices(provider: ProviderSummary, session: SessionView): ModeChoice<InteractionMode>[] {
  return choices(
    INTERACTION_MODES,
    provider.interactionModes,
    (session.ceiling?.interactionMode as InteractionMode | undefined) ?? null,
    "interaction",
  );
}

/** The most careful runtime mode the session may use (a person widens it on purpose). */
export function defaultRuntimeMode(options: readonly ModeChoice<RuntimeMode>[]): RuntimeMode | null {
  return options.find((option) => option.allowed)?.mode ?? null;
}

/** `default` when allowed, else the broadest allowed interaction mode. */
export function defaultInteractionMode(options: readonly ModeChoice<InteractionMode>[]): InteractionMode | null {
  const allowed = options.filter((option) => option.allowed);
  return allowed.find((option) => option.mode === "default")?.mode ?? allowed.at(-1)?.mode ?? null;
}

/** The projects a thread can be started in: the Scratch project is for launches without one. */
export function startableProjects(projects: readonly Project[]): Project[] {
  return projects.filter((project) => !project.scratch);
}

/** The first instance that can run work, else the first one. */
export function defaultProvider(providers: readonly ProviderSummary[]): ProviderSummary | null {
  return providers.find((provider) => provider.canRunChildTasks) ?? providers[0] ?? null;
}

/** The efforts a model takes (none: it takes no effort setting) and the one to preselect. */
export function effortChoices(model: ProviderModel | null): {
  readonly efforts: readonly string[];
  readonly preselected: string | null;
} {
  const efforts = model?.efforts ?? [];
  if (efforts.length === 0) return { efforts, preselected: null };
  return {
    efforts,
    preselected:
      model?.defaultEffort !== undefined && efforts.includes(model.defaultEffort) ? model.defaultEffort : null,
  };
}

/** What the person chose in the composer. */
export interface NewThreadDraft {
  readonly projectId: string;
  readonly providerInstanceId: string;
  /** Null: the provider's first model. */
  readonly model: string | null;
  /** Null: the provider's default effort. */
  readonly effort: string | null;
  readonly runtimeMode: RuntimeMode;
  readonly interactionMode: InteractionMode;
  readonly title: string;
  readonly prompt: string;
}

/** POST /threads's body for one new thread that starts with the prompt. */
export function createThreadsBody(draft: NewThreadDraft, clientRequestId: string) {
  const title = draft.title.trim();
  return {
    projectId: draft.projectId,
    clientRequestId,
    threads: [
      {
        prompt: draft.prompt,
        ...(title !== "" ? { title } : {}),
        target: {
          providerInstanceId: draft.providerInstanceId,
          ...(draft.model !== null ? { model: draft.model } : {}),
          ...(draft.effort !== null ? { effort: draft.effort } : {}),
        },
        runtimeMode: draft.runtimeMode,
        interactionMode: draft.interactionMode,
      },
    ],
  };
}
