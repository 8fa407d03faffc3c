import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api } from "../api/client.js";
import {
  ApiError,
  type CreatedThreads,
  type ProfileSummary,
  type Project,
  type ProviderModel,
  type ProviderSummary,
  type SessionView,
} from "../api/types.js";
import {
  createThreadsBody,
  defaultInteractionMode,
  defaultProvider,
  defaultRuntimeMode,
  effortChoices,
  interactionModeChoices,
  MODE_HINTS,
  MODE_LABELS,
  profileMismatch,
  providerForProfile,
  runtimeModeChoices,
  startableProjects,
  type InteractionMode,
  type RuntimeMode,
} from "../model/new-thread.js";

/** No model named: a provider that lists none runs its default. */
const PROVIDER_DEFAULT = "";

/** Why Start cannot work yet, or null. */
function whyNotStartable(state: {
  readonly canOperate: boolean;
  readonly projects: readonly Project[];
  readonly providers: readonly ProviderSummary[] | null;
  readonly provider: ProviderSummary | null;
  readonly profile: ProfileSummary | null;
  readonly modesChosen: boolean;
}): string | null {
  if (!state.canOperate) return "Starting a thread needs the operate verb; this session's token does not have it.";
  if (state.projects.length === 0) return "Add a project first.";
  if (state.providers === null) return null;
  if (state.provider === null) return "No provider is configured.";
  if (!state.provider.canRunChildTasks)
    return `${state.provider.providerInstanceId} cannot run work: ${state.provider.constraints.join("; ") || "unavailable"}. Providers says what fixes it.`;
  const mismatch = profileMismatch(state.profile, state.provider);
  if (mismatch !== null) return `${state.provider.providerInstanceId} cannot take this profile: ${mismatch}`;
  if (!state.modesChosen) return "This session's ceiling allows none of the modes this provider offers.";
  return null;
}

/**
 * The New thread composer: a profile (GET /profiles: its description, and which providers can
 * carry it), project, provider, model, effort and modes, picked from the provider snapshot (GET
 * /providers) and held to the session's ceiling and the profile's, then a prompt; Start creates the
 * thread (POST /threads, one retry key per attempt) and hands it to `onStarted`, which opens it.
 */
export function NewThreadForm(props: {
  readonly projects: readonly Project[];
  readonly session: SessionView;
  /** The project to preselect (the one the person came from). */
  readonly projectId?: string | null;
  readonly onStarted: (threadId: string, notice: string) => void;
}) {
  const projects = startableProjects(props.projects);
  const [providers, setProviders] = useState<readonly ProviderSummary[] | null>(null);
  const [profiles, setProfiles] = useState<readonly ProfileSummary[]>([]);
  const [profileName, setProfileName] = useState<string>("");
  const [loadError, setLoadError] = useState<string | null>(null);
  const [projectId, setProjectId] = useState<string>(props.projectId ?? projects[0]?.projectId ?? "");
  const [providerId, setProviderId] = useState<string>("");
  const [model, setModel] = useState<string>(PROVIDER_DEFAULT);
  const [effort, setEffort] = useState<string>("");
  const [runtimeMode, setRuntimeMode] = useState<RuntimeMode | "">("");
  const [interactionMode, setInteractionMode] = useState<InteractionMode | "">("");
  const [title, setTitle] = useState("");
  const [prompt, setPrompt] = useState("");
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  // One retry key per attempt: a Start retried after a lost answer lands on the same thread.
  const attemptKey = useRef<string | null>(null);
  const canOperate = props.session.verbs.includes("operate");

  // A choice brings its defaults in the same update (an effect would run after the next
  // choice and undo it): a provider its first model (the one it runs when none is named), that
  // model's effort and the most careful modes; a model its effort.
  const chooseModel = (candidate: ProviderModel | null) => {
    setModel(candidate?.id ?? PROVIDER_DEFAULT);
    setEffort(effortChoices(candidate).preselected ?? "");
  };
  const chooseProvider = (chosen: ProviderSummary | null, withProfile: ProfileSummary | null = profile) => {
    setProviderId(chosen?.providerInstanceId ?? "");
    // A profile that names its model (and effort) fixes them: another would be refused.
    const fixedModel = withProfile?.target?.model;
    const candidate =
      fixedModel === undefined
        ? (chosen?.models[0] ?? null)
        : (chosen?.models.find((m) => m.id === fixedModel) ?? null);
    chooseModel(candidate);
    if (fixedModel !== undefined) setModel(fixedModel);
    if (withProfile?.target?.effort !== undefined) setEffort(withProfile.target.effort);
    setRuntimeMode(
      (chosen === null ? null : defaultRuntimeMode(runtimeModeChoices(chosen, props.session, withProfile))) ?? "",
    );
    setInteractionMode(
      (chosen === null ? null : defaultInteractionMode(interactionModeChoices(chosen, props.session, withProfile))) ??
        "",
    );
  };
  const chooseProfile = (chosen: ProfileSummary | null) => {
    setProfileName(chosen?.name ?? "");
    if (providers !== null) chooseProvider(providerForProfile(chosen, providers), chosen);
  };

  useEffect(() => {
    void api<{ providers: ProviderSummary[] }>("GET", "/providers")
      .then((answer) => {
        setProviders(answer.providers);
        chooseProvider(defaultProvider(answer.providers));
      })
      .catch((failure: unknown) => setLoadError(failure instanceof ApiError ? failure.message : String(failure)));
  }, []);
  // The profiles depend on the project (its .switchyard/agents, .claude/agents, OpenCode agents).
  useEffect(() => {
    if (projectId === "") return;
    void api<{ profiles: ProfileSummary[] }>("GET", `/profiles?projectId=${encodeURIComponent(projectId)}`)
      .then((answer) => {
        setProfiles(answer.profiles);
        if (!answer.profiles.some((candidate) => candidate.name === profileName)) setProfileName("");
      })
      .catch(() => setProfiles([]));
  }, [projectId]);
  // A project added meanwhile (the first one) is picked when none was.
  useEffect(() => {
    if (projectId === "" || !projects.some((project) => project.projectId === projectId))
      setProjectId(props.projectId ?? projects[0]?.projectId ?? "");
  }, [projects.map((project) => project.projectId).join(",")]);

  const profile = profiles.find((candidate) => candidate.name === profileName) ?? null;
  const provider = providers?.find((candidate) => candidate.providerInstanceId === providerId) ?? null;
  const chosenModel = provider?.models.find((candidate) => candidate.id === model) ?? null;
  const efforts = effortChoices(chosenModel);
  const runtimeChoices = useMemo(
    () => (provider === null ? [] : runtimeModeChoices(provider, props.session, profile)),
    [provider, props.session, profile],
  );
  const interactionChoices = useMemo(
    () => (provider === null ? [] : interactionModeChoices(provider, props.session, profile)),
    [provider, props.session, profile],
  );

  const edited =
    <T,>(set: (value: T) => void) =>
    (value: T) => {
      attemptKey.current = null;
      setProblem(null);
      set(value);
    };
  const missing = whyNotStartable({
    canOperate,
    projects,
    providers,
    provider,
    profile,
    modesChosen: runtimeMode !== "" && interactionMode !== "",
  });

  const start = async (event: Event) => {
    event.preventDefault();
    if (missing !== null || prompt.trim() === "" || runtimeMode === "" || interactionMode === "") return;
    setBusy(true);
    setProblem(null);
    attemptKey.current ??= `ui-${crypto.randomUUID()}`;
    try {
      const body = createThreadsBody(
        {
          projectId,
          providerInstanceId: providerId,
          model: model === PROVIDER_DEFAULT ? null : model,
          effort: effort === "" ? null : effort,
          runtimeMode,
          interactionMode,
          title,
          prompt,
          profile: profile?.name ?? null,
        },
        attemptKey.current,
      );
      const created = await api<CreatedThreads>("POST", "/threads", body);
      const entry = created.threads[0]!;
      attemptKey.current = null;
      const what = [
        entry.thread.providerInstanceId,
        entry.thread.model,
        entry.thread.effort,
        entry.thread.runtimeMode,
        entry.thread.interactionMode,
        entry.thread.profile?.name !== undefined ? `profile ${entry.thread.profile.name}` : null,
      ]
        .filter((part) => part !== null && part !== undefined)
        .join(" · ");
      props.onStarted(entry.thread.threadId, [`Started on ${what}.`, ...entry.notes].join(" "));
    } catch (failure) {
      setProblem(failure instanceof ApiError ? failure.message : String(failure));
      setBusy(false);
    }
  };

  return (
    <form class="new-thread" onSubmit={start} aria-label="New thread">
      {loadError !== null && (
        <p class="error" role="alert">
          {loadError}
        </p>
      )}
      <div class="pickers">
        <div class="picker picker-profile">
          <label for="pick-profile">Profile</label>
          <select
            id="pick-profile"
            aria-describedby="pick-profile-hint"
            value={profileName}
            disabled={busy || profiles.length === 0}
            onChange={(e) => {
              const name = (e.target as HTMLSelectElement).value;
              edited(chooseProfile)(profiles.find((candidate) => candidate.name === name) ?? null);
            }}
          >
            <option value="">{profiles.length === 0 ? "No profiles defined" : "None"}</option>
            {profiles.map((candidate) => (
              <option key={candidate.name} value={candidate.name} disabled={candidate.refusal !== undefined}>
                {candidate.name}
                {candidate.refusal !== undefined ? " (refused)" : ""}
              </option>
            ))}
          </select>
          <p id="pick-profile-hint" class="hint field-hint">
            {profile === null
              ? "Optional: a reusable agent (its instructions, provider and limits); docs/profiles.md says how to write one."
              : profile.description}
          </p>
        </div>
        <div class="picker">
          <label for="pick-project">Project</label>
          <select
            id="pick-project"
            value={projectId}
            disabled={busy || projects.length === 0}
            onChange={(e) => edited(setProjectId)((e.target as HTMLSelectElement).value)}
          >
            {projects.length === 0 && <option value="">No project yet</option>}
            {projects.map((project) => (
              <option key={project.projectId} value={project.projectId} title={project.rootPath}>
                {project.name}
              </option>
            ))}
          </select>
        </div>
        <div class="picker">
          <label for="pick-provider">Provider</label>
          <select
            id="pick-provider"
            value={providerId}
            disabled={busy || providers === null || providers.length === 0}
            onChange={(e) => {
              const id = (e.target as HTMLSelectElement).value;
              edited(chooseProvider)(providers?.find((candidate) => candidate.providerInstanceId === id) ?? null);
            }}
          >
            {providers === null && <option value="">Loading…</option>}
            {providers?.map((candidate) => (
              <option
                key={candidate.providerInstanceId}
                value={candidate.providerInstanceId}
                disabled={!candidate.canRunChildTasks || profileMismatch(profile, candidate) !== null}
              >
                {candidate.providerInstanceId}
                {!candidate.canRunChildTasks
                  ? " (cannot run work)"
                  : profileMismatch(profile, candidate) !== null
                    ? ` (cannot take profile ${profile!.name})`
                    : ""}
              </option>
            ))}
          </select>
        </div>
        <div class="picker">
          <label for="pick-model">Model</label>
          <select
            id="pick-model"
            value={model}
            disabled={busy || provider === null || profile?.target?.model !== undefined}
            onChange={(e) => {
              const id = (e.target as HTMLSelectElement).value;
              edited(chooseModel)(provider?.models.find((candidate) => candidate.id === id) ?? null);
            }}
          >
            {provider?.models.length === 0 && <option value={PROVIDER_DEFAULT}>The provider's default</option>}
            {profile?.target?.model !== undefined &&
              !(provider?.models ?? []).some((candidate) => candidate.id === profile.target!.model) && (
                <option value={profile.target.model}>{profile.target.model}</option>
              )}
            {provider?.models.map((candidate) => (
              <option key={candidate.id} value={candidate.id}>
                {candidate.id}
              </option>
            ))}
          </select>
        </div>
        <div class="picker">
          <label for="pick-effort">Effort</label>
          <select
            id="pick-effort"
            value={effort}
            disabled={busy || efforts.efforts.length === 0 || profile?.target?.effort !== undefined}
            onChange={(e) => edited(setEffort)((e.target as HTMLSelectElement).value)}
          >
            <option value="">
              {efforts.efforts.length === 0 ? "This model takes none" : "The provider's default"}
            </option>
            {efforts.efforts.map((level) => (
              <option key={level} value={level}>
                {level}
              </option>
            ))}
          </select>
        </div>
        <div class="picker">
          <label for="pick-runtime-mode">Runtime mode</label>
          <select
            id="pick-runtime-mode"
            aria-describedby="pick-runtime-mode-hint"
            value={runtimeMode}
            disabled={busy || runtimeChoices.length === 0}
            onChange={(e) => edited(setRuntimeMode)((e.target as HTMLSelectElement).value as RuntimeMode)}
          >
            {runtimeChoices.map((choice) => (
              <option key={choice.mode} value={choice.mode} disabled={!choice.allowed}>
                {MODE_LABELS[choice.mode]}
                {choice.why !== null ? ` (${choice.why})` : ""}
              </option>
            ))}
          </select>
          <p id="pick-runtime-mode-hint" class="hint field-hint">
            {runtimeMode === "" ? "None of its modes is within this session's ceiling." : MODE_HINTS[runtimeMode]}
          </p>
        </div>
        <div class="picker">
          <label for="pick-interaction-mode">Interaction</label>
          <select
            id="pick-interaction-mode"
            aria-describedby="pick-interaction-mode-hint"
            value={interactionMode}
            disabled={busy || interactionChoices.length === 0}
            onChange={(e) => edited(setInteractionMode)((e.target as HTMLSelectElement).value as InteractionMode)}
          >
            {interactionChoices.map((choice) => (
              <option key={choice.mode} value={choice.mode} disabled={!choice.allowed}>
                {MODE_LABELS[choice.mode]}
                {choice.why !== null ? ` (${choice.why})` : ""}
              </option>
            ))}
          </select>
          <p id="pick-interaction-mode-hint" class="hint field-hint">
            {interactionMode === ""
              ? "None of its modes is within this session's ceiling."
              : MODE_HINTS[interactionMode]}
          </p>
        </div>
      </div>
      {provider !== null && provider.omittedModels > 0 && (
        <p class="hint field-hint">
          {provider.omittedModels} more models are not listed here; the CLI and the API find them by name.
        </p>
      )}
      <label for="new-thread-title">Title</label>
      <input
        id="new-thread-title"
        aria-describedby="new-thread-title-hint"
        value={title}
        maxLength={200}
        disabled={busy}
        onInput={(e) => edited(setTitle)((e.target as HTMLInputElement).value)}
      />
      <p id="new-thread-title-hint" class="hint field-hint">
        Optional: without one, a title is made from the prompt.
      </p>
      <label for="new-thread-prompt">Prompt</label>
      <textarea
        id="new-thread-prompt"
        rows={5}
        value={prompt}
        disabled={busy || !canOperate}
        placeholder="What should the agent do? (Ctrl+Enter starts)"
        onInput={(e) => edited(setPrompt)((e.target as HTMLTextAreaElement).value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) void start(e);
        }}
      />
      <div class="new-thread-bar">
        <button type="submit" class="primary" disabled={busy || missing !== null || prompt.trim() === ""}>
          {busy ? "Starting…" : "Start thread"}
        </button>
        {missing !== null && (
          <p class="hint" role="note">
            {missing}
          </p>
        )}
      </div>
      {problem !== null && (
        <p class="error" role="alert">
          {problem}
        </p>
      )}
    </form>
  );
}
