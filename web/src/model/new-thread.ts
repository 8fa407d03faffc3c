import type { ProfileSummary, Project, ProviderModel, ProviderSummary, SessionView } from "../api/types.js";

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

/** A profile's ceiling rules out the modes above it too (the server refuses them: a profile never widens). */
function withinProfile<M extends string>(
  options: ModeChoice<M>[],
  all: readonly M[],
  limit: M | undefined,
  profile: ProfileSummary | null,
): ModeChoice<M>[] {
  if (profile === null || limit === undefined) return options;
  return options.map((option) =>
    option.allowed && all.indexOf(option.mode) > all.indexOf(limit)
      ? { ...option, allowed: false, why: `above profile ${profile.name}'s ceiling, ${limit}` }
      : option,
  );
}

/** The runtime modes the provider offers, each allowed when within the session's ceiling and the profile's. */
export function runtimeModeChoices(
  provider: ProviderSummary,
  session: SessionView,
  profile: ProfileSummary | null = null,
): ModeChoice<RuntimeMode>[] {
  return withinProfile(
    choices(
      RUNTIME_MODES,
      provider.runtimeModes,
      (session.ceiling?.runtimeMode as RuntimeMode | undefined) ?? null,
      "runtime",
    ),
    RUNTIME_MODES,
    profile?.maxRuntimeMode,
    profile,
  );
}

/** The interaction modes the provider offers, each allowed when within the session's ceiling and the profile's. */
export function interactionModeChoices(
  provider: ProviderSummary,
  session: SessionView,
  profile: ProfileSummary | null = null,
): ModeChoice<InteractionMode>[] {
  return withinProfile(
    choices(
      INTERACTION_MODES,
      provider.interactionModes,
      (session.ceiling?.interactionMode as InteractionMode | undefined) ?? null,
      "interaction",
    ),
    INTERACTION_MODES,
    profile?.maxInteractionMode,
    profile,
  );
}

/**
 * Whether a provider can take work with the profile: the profile names another provider, or
 * the provider cannot enforce its tool rules or apply its harness settings (the server would
 * refuse), or the profile is refused everywhere. Null: it can.
 */
export function profileMismatch(profile: ProfileSummary | null, provider: ProviderSummary): string | null {
  if (profile === null) return null;
  if (profile.refusal !== undefined) return profile.refusal;
  const carrier = profile.providers?.find((candidate) => candidate.providerInstanceId === provider.providerInstanceId);
  if (carrier === undefined) return `profile ${profile.name} runs on ${profileProviders(profile)}`;
  if (!carrier.canCarry) return carrier.reason ?? `it cannot carry profile ${profile.name}`;
  return null;
}

function profileProviders(profile: ProfileSummary): string {
  const names = (profile.providers ?? []).map((carrier) => carrier.providerInstanceId);
  return names.length === 0 ? "no configured provider" : names.join(", ");
}

/** The provider a profile starts on: its target's, else the first that can run work and carry it. */
export function providerForProfile(
  profile: ProfileSummary | null,
  providers: readonly ProviderSummary[],
): ProviderSummary | null {
  if (profile === null) return defaultProvider(providers);
  const carriers = providers.filter((provider) => profileMismatch(profile, provider) === null);
  return carriers.find((provider) => provider.canRunChildTasks) ?? carriers[0] ?? null;
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
  /** The profile the thread runs with, or null for none. */
  readonly profile?: string | null;
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
        ...(draft.profile !== undefined && draft.profile !== null ? { profile: draft.profile } : {}),
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
