import { ApplyChangesInput, ApplyChangesOutput } from "../../../../contract/apply-changes.js";
import { DiscardChangesInput, DiscardChangesOutput } from "../../../../contract/discard-changes.js";
import { ReadChangesInput, ReadChangesOutput } from "../../../../contract/read-changes.js";
import { ListWorkspacesInput, ListWorkspacesOutput } from "../../../../contract/list-workspaces.js";
import { defineRoute } from "../api-route.js";
import { ThreadPath } from "./threads.js";

export const readChangesRoute = defineRoute({
  method: "GET",
  path: "/threads/{threadId}/changes",
  operationId: "readChanges",
  summary: "Read a thread's change set",
  description:
    "read_changes: for a thread that works in its own worktree, the files it changed, its commits and a page of the diff against the commit it started from (offset=nextOffset reads on; maxChars, default 30000). path limits the diff to one file.",
  tag: "changes",
  requires: "orchestration:read",
  params: ThreadPath,
  query: ReadChangesInput.omit({ threadId: true }),
  input: ReadChangesInput,
  output: ReadChangesOutput,
  outputName: "ChangeSet",
  handle: (input, { caller, services }) => services.changeSets.read(caller, input),
});

export const applyChangesRoute = defineRoute({
  method: "POST",
  path: "/threads/{threadId}/changes/apply",
  operationId: "applyChanges",
  summary: "Apply a thread's changes to the workspace they go back to",
  description:
    "apply_changes: merges (default) or cherry-picks the thread's commits into its parent's workspace (a client's: the project folder). A conflict changes nothing and lists the files (outcome.outcome conflict). Needs operate on the project and a token allowed auto-accept-edits or full-access. Idempotency-Key (or clientRequestId) makes a retry return the same outcome.",
  tag: "changes",
  requires: "orchestration:operate",
  params: ThreadPath,
  body: ApplyChangesInput.omit({ threadId: true }),
  idempotencyKey: "clientRequestId",
  input: ApplyChangesInput,
  output: ApplyChangesOutput,
  outputName: "ChangeSetDecision",
  handle: (input, { caller, services, signal }) => services.changeSets.apply(caller, input, signal),
});

export const discardChangesRoute = defineRoute({
  method: "POST",
  path: "/threads/{threadId}/changes/discard",
  operationId: "discardChanges",
  summary: "Discard a thread's changes",
  description:
    "discard_changes: removes the thread's worktree and its branch; keepBranch keeps the branch for a pull request. Idempotency-Key (or clientRequestId) makes a retry return the same outcome.",
  tag: "changes",
  requires: "orchestration:operate",
  params: ThreadPath,
  body: DiscardChangesInput.omit({ threadId: true }),
  idempotencyKey: "clientRequestId",
  input: DiscardChangesInput,
  output: DiscardChangesOutput,
  outputName: "ChangeSetDiscard",
  handle: (input, { caller, services, signal }) => services.changeSets.discard(caller, input, signal),
});

export const listWorkspacesRoute = defineRoute({
  method: "GET",
  path: "/workspaces",
  operationId: "listWorkspaces",
  summary: "List a project's thread workspaces",
  description:
    "The worktrees and scratch folders threads of a project work in, newest first: where, what changed, what was decided, and when retention removes them.",
  tag: "changes",
  requires: "orchestration:read",
  query: ListWorkspacesInput,
  input: ListWorkspacesInput,
  output: ListWorkspacesOutput,
  outputName: "WorkspaceList",
  handle: async (input, { caller, services }) => {
    await services.callers.requireInScope(caller, { projectIds: [input.projectId] });
    return { workspaces: await services.workspaces.list({ projectId: input.projectId, all: input.all === "true" }) };
  },
});
