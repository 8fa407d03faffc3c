import { useEffect, useRef, useState } from "preact/hooks";
import { api, query as queryString } from "../api/client.js";
import type { InstallJob, InstalledRegistryAgent, RegistryAgent, RegistrySearch } from "../api/registry-types.js";
import { ApiError, type SessionView } from "../api/types.js";
import {
  REGISTRY_API,
  installStatusText,
  jobFinished,
  platformsText,
  progressValue,
  unavailableText,
} from "../model/install-progress.js";

function messageOf(failure: unknown): string {
  return failure instanceof ApiError ? failure.message : failure instanceof Error ? failure.message : String(failure);
}

function isAbort(failure: unknown): boolean {
  return failure instanceof DOMException && failure.name === "AbortError";
}

/** An install's progress bar and what it is doing, announced politely to screen readers. */
function InstallProgress(props: { readonly job: InstallJob }) {
  const { job } = props;
  const value = progressValue(job);
  const text = installStatusText(job);
  return (
    <div class={`install-progress phase-${job.phase}`} data-phase={job.phase}>
      {job.phase !== "failed" && (
        <progress
          max={100}
          {...(value !== null ? { value } : {})}
          aria-label={`Installing ${job.agentId}`}
          aria-valuetext={text}
        />
      )}
      <p
        class={job.phase === "failed" ? "error" : job.phase === "done" ? "outcome" : "hint"}
        role={job.phase === "failed" ? "alert" : "status"}
      >
        {text}
      </p>
    </div>
  );
}

function AgentCard(props: {
  readonly agent: RegistryAgent;
  readonly job: InstallJob | undefined;
  readonly canInstall: boolean;
  readonly onInstall: (agent: RegistryAgent) => void;
}) {
  const { agent, job } = props;
  const busy = job !== undefined && !jobFinished(job);
  const cannot = unavailableText(agent);
  return (
    <li class="card registry-agent" data-agent-id={agent.id} aria-labelledby={`agent-${agent.id}`}>
      <header>
        <h3 id={`agent-${agent.id}`}>
          {agent.name} <span class="hint">{agent.id}</span>
        </h3>
        <span class="badge">{agent.version}</span>
        {agent.installed && <span class="badge badge-completed">installed</span>}
      </header>
      <p>{agent.description}</p>
      <dl class="agent-facts">
        <dt>Runs on</dt>
        <dd>{platformsText(agent)}</dd>
        {agent.installedVersions.length > 0 && (
          <>
            <dt>Installed here</dt>
            <dd>{agent.installedVersions.join(", ")}</dd>
          </>
        )}
      </dl>
      {cannot !== null ? (
        <p class="hint">{cannot}</p>
      ) : agent.installed ? null : props.canInstall ? (
        <button type="button" class="primary" disabled={busy} onClick={() => props.onInstall(agent)}>
          {busy ? "Installing…" : `Install ${agent.name} ${agent.version}`}
        </button>
      ) : (
        <p class="hint">
          Installing needs a session for every project with the install verb (switchyard ui gives it), or operate at
          full-access.
        </p>
      )}
      {job !== undefined && <InstallProgress job={job} />}
    </li>
  );
}

/**
 * The Registry: search the ACP Registry, install an agent with a live progress bar, and see the
 * agents installed on this machine. A client of the ACP Registry plugin's API routes; a job is
 * followed by asking for its next revision (each answer is a change), not by a timer.
 */
export function RegistryPage(props: { readonly session: SessionView }) {
  // The server's rule (docs/api.md): the install verb, or operate at full-access, for every project.
  const everyProject = props.session.projects === "*";
  const canInstall =
    everyProject &&
    (props.session.verbs.includes("install") ||
      (props.session.verbs.includes("operate") && props.session.ceiling?.runtimeMode === "full-access"));
  const [text, setText] = useState("");
  const [search, setSearch] = useState<RegistrySearch | null>(null);
  const [searching, setSearching] = useState(false);
  const [installed, setInstalled] = useState<readonly InstalledRegistryAgent[] | null>(null);
  const [jobs, setJobs] = useState<ReadonlyMap<string, InstallJob>>(new Map());
  const [error, setError] = useState<string | null>(null);
  const [missing, setMissing] = useState(false);
  const lastQuery = useRef("");
  const page = useRef(new AbortController());

  const failed = (failure: unknown) => {
    if (isAbort(failure)) return;
    if (failure instanceof ApiError && failure.code === "route_not_found") setMissing(true);
    else setError(messageOf(failure));
  };

  const loadInstalled = () =>
    api<{ agents: InstalledRegistryAgent[] }>("GET", `${REGISTRY_API}/installed`, undefined, page.current.signal)
      .then((answer) => setInstalled(answer.agents))
      .catch(failed);

  const runSearch = (words: string) => {
    lastQuery.current = words;
    setSearching(true);
    setError(null);
    return api<RegistrySearch>(
      "GET",
      `${REGISTRY_API}/agents${queryString({ q: words === "" ? undefined : words })}`,
      undefined,
      page.current.signal,
    )
      .then((answer) => {
        if (lastQuery.current === words) setSearch(answer);
      })
      .catch(failed)
      .finally(() => {
        if (lastQuery.current === words) setSearching(false);
      });
  };

  const follow = async (start: InstallJob) => {
    let job = start;
    setJobs((map) => new Map(map).set(job.agentId, job));
    try {
      while (!jobFinished(job) && !page.current.signal.aborted) {
        ({ job } = await api<{ job: InstallJob }>(
          "GET",
          `${REGISTRY_API}/install-jobs/${job.jobId}${queryString({ afterRevision: job.revision })}`,
          undefined,
          page.current.signal,
        ));
        setJobs((map) => new Map(map).set(job.agentId, job));
      }
    } catch (failure) {
      failed(failure);
      return;
    }
    await Promise.all([loadInstalled(), runSearch(lastQuery.current)]);
  };

  const install = (agent: RegistryAgent) => {
    setError(null);
    void api<{ job: InstallJob }>("POST", `${REGISTRY_API}/install-jobs`, { agentId: agent.id }, page.current.signal)
      .then((answer) => follow(answer.job))
      .catch(failed);
  };

  useEffect(() => {
    const controller = new AbortController();
    page.current = controller;
    void loadInstalled();
    void runSearch("");
    // Installs started before this page opened (another tab, a reload) are followed too.
    void api<{ jobs: InstallJob[] }>("GET", `${REGISTRY_API}/install-jobs`, undefined, controller.signal)
      .then((answer) => {
        for (const job of answer.jobs.reverse()) if (!jobFinished(job)) void follow(job);
      })
      .catch(failed);
    return () => controller.abort();
  }, []);

  if (missing) {
    return (
      <main class="page registry" id="main" aria-labelledby="registry-title">
        <h1 id="registry-title">Registry</h1>
        <p class="error">
          This server has no ACP Registry plugin loaded (its API routes are missing), so there is nothing to search.
          Check `switchyard plugins list`.
        </p>
      </main>
    );
  }
  return (
    <main class="page registry" id="main" aria-labelledby="registry-title">
      <h1 id="registry-title">Registry</h1>
      <form
        class="registry-search"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          void runSearch(text.trim());
        }}
      >
        <label for="registry-query">Search the ACP Registry</label>
        <input
          id="registry-query"
          type="search"
          value={text}
          onInput={(event) => setText((event.target as HTMLInputElement).value)}
          placeholder="name, id or words of the description"
        />
        {/* Never disabled: Enter while the first listing loads must still search (the newest wins). */}
        <button type="submit">Search</button>
      </form>
      {error !== null && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <section aria-labelledby="results-title">
        <h2 id="results-title">Agents</h2>
        {search === null ? (
          <p class="hint">{searching ? "Searching…" : ""}</p>
        ) : (
          <>
            <p class="hint" role="status">
              {search.total === 0
                ? `No agents match "${search.query}".`
                : `${search.agents.length} of ${search.total} agent${search.total === 1 ? "" : "s"}`}
              {search.hiddenUnavailable > 0 ? `; ${search.hiddenUnavailable} that cannot run here hidden` : ""}
              {search.index.stale
                ? `. The registry could not be reached: this is the copy fetched ${search.index.fetchedAt}.`
                : ""}
            </p>
            <ul class="registry-results">
              {search.agents.map((agent) => (
                <AgentCard
                  key={agent.id}
                  agent={agent}
                  job={jobs.get(agent.id)}
                  canInstall={canInstall}
                  onInstall={install}
                />
              ))}
            </ul>
          </>
        )}
      </section>
      <section aria-labelledby="installed-title" class="registry-installed">
        <h2 id="installed-title">Installed agents</h2>
        {installed === null ? (
          <p class="hint">Loading…</p>
        ) : installed.length === 0 ? (
          <p class="empty">No registry agents are installed yet.</p>
        ) : (
          <div class="table-scroll">
            <table>
              <caption class="visually-hidden">Installed registry agents</caption>
              <thead>
                <tr>
                  <th scope="col">Agent</th>
                  <th scope="col">Version</th>
                  <th scope="col">Distribution</th>
                  <th scope="col">Integrity</th>
                  <th scope="col">Installed</th>
                </tr>
              </thead>
              <tbody>
                {installed.map((agent) => (
                  <tr key={`${agent.agentId}@${agent.version}`} data-installed-agent={agent.agentId}>
                    <th scope="row">{agent.agentId}</th>
                    <td>{agent.version}</td>
                    <td>
                      {agent.platform !== null ? `${agent.distribution} (${agent.platform})` : agent.distribution}
                    </td>
                    <td>{agent.integrity.replace(/_/g, " ")}</td>
                    <td>
                      <time dateTime={agent.installedAt}>{new Date(agent.installedAt).toLocaleString()}</time>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </main>
  );
}
