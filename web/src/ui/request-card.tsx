import { useState } from "preact/hooks";
import { api } from "../api/client.js";
import { ApiError, type PendingRequest, type ThreadRow, type Verb } from "../api/types.js";
import { onLinkClick, pathOf } from "./router.js";

/**
 * One pending question or approval, answerable when the session holds the verb it needs: in the
 * inbox (with a link to its thread) and in its thread's own page (`inThread`).
 */
export function RequestCard(props: {
  readonly request: PendingRequest;
  readonly thread: ThreadRow | undefined;
  readonly verbs: readonly Verb[];
  readonly onAnswered: () => void;
  readonly inThread?: boolean;
}) {
  const { request } = props;
  const [answers, setAnswers] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const needed: Verb = request.kind === "approval" ? "approve" : "operate";
  const allowed = props.verbs.includes(needed);
  const respond = async (body: Record<string, unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await api(
        "POST",
        `/threads/${encodeURIComponent(request.threadId)}/pending-requests/${encodeURIComponent(request.requestId)}/respond`,
        body,
      );
      props.onAnswered();
    } catch (failure) {
      setError(failure instanceof ApiError ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  };
  const route = { page: "thread", threadId: request.threadId } as const;
  const title = request.approval?.title ?? request.questions.map((q) => q.question).join(" ");
  return (
    <article
      class="request card"
      data-request-id={request.requestId}
      aria-label={`${request.kind === "approval" ? "Approval" : "Question"}: ${title}`}
    >
      <header>
        <span class={`badge badge-${request.kind === "approval" ? "needs-attention" : "running"}`}>
          {request.kind === "approval" ? `approval · ${request.approval?.approvalKind ?? ""}` : "question"}
        </span>
        {props.inThread === true ? (
          <span class="request-lead">{request.kind === "approval" ? "The agent asks to run:" : "The agent asks:"}</span>
        ) : (
          <a href={pathOf(route)} onClick={onLinkClick(route)}>
            {props.thread?.title ?? request.threadId}
          </a>
        )}
      </header>
      {request.nativeSubagent !== undefined && (
        <p class="request-origin" data-native-subagent={request.nativeSubagent.nativeId}>
          Asked by the provider's own sub-agent <b>{request.nativeSubagent.title ?? request.nativeSubagent.nativeId}</b>{" "}
          <span class="badge badge-native">native</span>
        </p>
      )}
      {request.approval !== null ? (
        <>
          <p class="request-title">
            <code>{request.approval.title}</code>
          </p>
          {request.approval.detail !== null && <pre class="detail">{request.approval.detail}</pre>}
        </>
      ) : (
        request.questions.map((question) => (
          <label key={question.id} class="question">
            {question.question}
            <input
              type="text"
              disabled={!allowed || busy}
              value={answers[question.id] ?? ""}
              onInput={(e) => setAnswers({ ...answers, [question.id]: (e.target as HTMLInputElement).value })}
            />
          </label>
        ))
      )}
      {allowed ? (
        <div class="actions">
          {request.kind === "approval" ? (
            <>
              <button
                type="button"
                class="primary"
                disabled={busy}
                onClick={() => void respond({ decision: "accept" })}
              >
                Approve
              </button>
              <button type="button" disabled={busy} onClick={() => void respond({ decision: "decline" })}>
                Decline
              </button>
            </>
          ) : (
            <>
              <button type="button" class="primary" disabled={busy} onClick={() => void respond({ answers })}>
                Answer
              </button>
              <button type="button" disabled={busy} onClick={() => void respond({ dismiss: true })}>
                Dismiss
              </button>
            </>
          )}
        </div>
      ) : (
        <p class="hint" role="note">
          Answering needs the {needed} verb; this session's token does not have it.
        </p>
      )}
      {error !== null && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </article>
  );
}
