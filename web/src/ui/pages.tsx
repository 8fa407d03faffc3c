import { useEffect, useState } from "preact/hooks";
import { api } from "../api/client.js";
import { ApiError, type PendingRequest, type ProviderSummary, type SessionView } from "../api/types.js";
import { ProviderDoctorPanel } from "./provider-doctor.js";
import { RequestCard } from "./request-card.js";
import type { Workspace } from "./workspace.js";

/** The attention inbox: every pending question and approval across threads, oldest first. */
export function Inbox(props: { readonly workspace: Workspace; readonly session: SessionView }) {
  const requests = [...props.workspace.requests.values()].sort((a: PendingRequest, b: PendingRequest) =>
    a.createdAt < b.createdAt ? -1 : 1,
  );
  return (
    <main class="page inbox" id="main" aria-labelledby="inbox-title">
      <h1 id="inbox-title">Needs a person</h1>
      {requests.length === 0 ? (
        <p class="empty">No questions or approvals are waiting.</p>
      ) : (
        <div class="request-list">
          {requests.map((request) => (
            <RequestCard
              key={request.requestId}
              request={request}
              thread={props.workspace.threads.get(request.threadId)}
              verbs={props.session.verbs}
              onAnswered={() => void props.workspace.refreshRequests(request.threadId)}
            />
          ))}
        </div>
      )}
    </main>
  );
}

function modelNames(provider: ProviderSummary): string {
  const names = provider.models.map((model) => model.id).join(", ");
  return provider.omittedModels > 0 ? `${names} (+${provider.omittedModels} more)` : names;
}

/** Providers: whether each can run work (and why not), its models and capabilities; then doctor's findings, with what fixes each. */
export function ProvidersPage() {
  const [providers, setProviders] = useState<readonly ProviderSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    void api<{ providers: ProviderSummary[] }>("GET", "/providers")
      .then((answer) => setProviders(answer.providers))
      .catch((failure: unknown) => setError(failure instanceof ApiError ? failure.message : String(failure)));
  }, []);
  return (
    <main class="page providers" id="main" aria-labelledby="providers-title">
      <h1 id="providers-title">Providers</h1>
      {error !== null && <p class="error">{error}</p>}
      {providers === null && error === null && <p class="hint">Loading…</p>}
      {providers !== null && (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Provider instances (scrolls sideways)">
          <table>
            <caption class="visually-hidden">Provider instances</caption>
            <thead>
              <tr>
                <th scope="col">Instance</th>
                <th scope="col">Runs work</th>
                <th scope="col">Why not</th>
                <th scope="col">Models</th>
                <th scope="col">Runtime modes</th>
                <th scope="col">Steering</th>
                <th scope="col">Interrupt</th>
                <th scope="col">Fork</th>
              </tr>
            </thead>
            <tbody>
              {providers.map((provider) => (
                <tr key={provider.providerInstanceId}>
                  <th scope="row">
                    {provider.providerInstanceId}
                    <span class="hint">
                      {" "}
                      {provider.displayName !== provider.providerInstanceId
                        ? provider.displayName
                        : provider.driverKind}
                    </span>
                  </th>
                  <td>{provider.canRunChildTasks ? "yes" : "no"}</td>
                  <td>{provider.constraints.join("; ")}</td>
                  <td>{modelNames(provider)}</td>
                  <td>{(provider.runtimeModes ?? []).join(", ")}</td>
                  <td>{provider.steering.replace(/_/g, " ")}</td>
                  <td>{provider.interrupt.replace(/_/g, " ")}</td>
                  <td>{provider.fork}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <section class="provider-setup" aria-labelledby="doctor-title">
        <h2 id="doctor-title">What doctor finds</h2>
        <ProviderDoctorPanel />
      </section>
    </main>
  );
}
