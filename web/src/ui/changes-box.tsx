import { useEffect, useState } from "preact/hooks";
import { api } from "../api/client.js";
import {
  ApiError,
  type ChangeSet,
  type ChangeSetDecision,
  type WorkspaceOutcome,
  type WorkspaceView,
} from "../api/types.js";

/** One line for what a decision came to. */
export function outcomeText(outcome: WorkspaceOutcome): string {
  switch (outcome.outcome) {
    case "applied":
      return `Applied to the parent's workspace${outcome.commit !== null ? ` (${outcome.commit.slice(0, 10)})` : ""}.`;
    case "nothing_to_apply":
      return "Nothing new to apply: the parent has all of it.";
    case "conflict":
      return `Conflict in ${outcome.files.join(", ")}: nothing was changed.${outcome.message !== null ? ` ${outcome.message}` : ""}`;
    case "discarded":
      return "Discarded: the worktree and its branch are removed.";
    case "kept":
      return "The branch is kept for a pull request; the worktree is removed.";
    case "failed":
      return `The apply failed: ${outcome.message ?? "no reason given"}.`;
  }
}

function summaryText(workspace: WorkspaceView): string {
  if (workspace.status === "removed")
    return `removed${workspace.disposition !== null ? ` (${workspace.disposition})` : ""}`;
  if (workspace.status !== "ready") return workspace.status;
  if (workspace.changes === null) return "no changes recorded yet";
  const { commits, fileCount, insertions, deletions } = workspace.changes;
  return `${fileCount} file${fileCount === 1 ? "" : "s"} changed, +${insertions} −${deletions}, ${commits} commit${commits === 1 ? "" : "s"}${workspace.disposition !== null ? ` · ${workspace.disposition}` : ""}`;
}

/**
 * A child's own worktree in the Agents panel: its branch and change summary, its diff on demand,
 * and Apply / Discard for a person whose session may (the server decides: applying needs a
 * ceiling that allows edits, and a refusal is shown as one).
 */
export function ChangesBox(props: {
  readonly threadId: string;
  readonly workspace: WorkspaceView;
  readonly canOperate: boolean;
  readonly childActive: boolean;
}) {
  const [workspace, setWorkspace] = useState(props.workspace);
  const [changeSet, setChangeSet] = useState<ChangeSet | null>(null);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ readonly text: string; readonly failed: boolean } | null>(null);
  // A newer view from the task (its run ended, a commit was recorded) replaces the one shown.
  useEffect(() => setWorkspace(props.workspace), [props.workspace]);
  const path = `/threads/${encodeURIComponent(props.threadId)}/changes`;

  async function show(): Promise<void> {
    setBusy(true);
    try {
      const read = await api<ChangeSet>("GET", `${path}?maxChars=20000`);
      setChangeSet(read);
      setWorkspace(read.workspace);
    } catch (failure) {
      setMessage({ text: failure instanceof ApiError ? failure.message : String(failure), failed: true });
    } finally {
      setBusy(false);
    }
  }

  async function decide(action: "apply" | "discard"): Promise<void> {
    setBusy(true);
    setMessage(null);
    try {
      const decision = await api<ChangeSetDecision>("POST", `${path}/${action}`, {});
      setWorkspace(decision.workspace);
      if (decision.outcome === null) setMessage({ text: "Still under way; it shows here once done.", failed: false });
      else
        setMessage({
          text: outcomeText(decision.outcome),
          failed: decision.outcome.outcome === "conflict" || decision.outcome.outcome === "failed",
        });
      if (action === "discard") setChangeSet(null);
    } catch (failure) {
      setMessage({ text: failure instanceof ApiError ? failure.message : String(failure), failed: true });
    } finally {
      setBusy(false);
    }
  }

  const open =
    workspace.status === "ready" && workspace.disposition !== "discarded" && workspace.disposition !== "kept";
  const decidable = open && workspace.strategy !== "scratch" && props.canOperate;
  return (
    <section class="changes-box" aria-label="Changes" data-changes-for={props.threadId}>
      <p class="changes-summary">
        {workspace.strategy === "scratch" ? "Scratch folder" : "Worktree"}
        {workspace.branch !== null && (
          <>
            {" "}
            on <code>{workspace.branch}</code>
          </>
        )}
        : <span class="changes-state">{summaryText(workspace)}</span>
      </p>
      <div class="changes-actions">
        {workspace.status === "ready" && workspace.strategy !== "scratch" && (
          <button type="button" onClick={() => void show()} disabled={busy}>
            {changeSet === null ? "Show changes" : "Refresh changes"}
          </button>
        )}
        {decidable && (
          <>
            <button
              type="button"
              class="primary"
              onClick={() => void decide("apply")}
              disabled={busy || props.childActive}
              title={props.childActive ? "The child is still working" : undefined}
            >
              Apply to parent
            </button>
            <button type="button" onClick={() => void decide("discard")} disabled={busy || props.childActive}>
              Discard
            </button>
          </>
        )}
      </div>
      {message !== null && (
        <p class={message.failed ? "error changes-outcome" : "outcome changes-outcome"} role="status">
          {message.text}
        </p>
      )}
      {changeSet !== null && (
        <div class="changes-detail">
          <ul class="changes-files">
            {changeSet.files.map((file) => (
              <li key={file.path}>
                <code>{file.status}</code> {file.path}
                {file.insertions !== null && (
                  <span class="hint">
                    {" "}
                    +{file.insertions} −{file.deletions}
                  </span>
                )}
              </li>
            ))}
          </ul>
          <pre class="diff" tabIndex={0} aria-label="Diff">
            {changeSet.diff}
          </pre>
          {changeSet.nextOffset !== null && (
            <p class="hint">
              The diff goes on ({changeSet.totalChars} characters in all); read_changes or the API pages through it.
            </p>
          )}
        </div>
      )}
    </section>
  );
}
