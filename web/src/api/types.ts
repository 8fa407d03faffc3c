/**
 * The shapes the UI reads from the HTTP API (/api/v1), named from the types generated out of the
 * server's OpenAPI document (`generated/switchyard-api.ts`; web/test/api/generated-types.test.ts
 * keeps it current). Nothing here is written by hand but the names: an API change reaches the UI
 * as a type error, not a surprise at run time.
 */
import type { components } from "./generated/switchyard-api.js";

type Schemas = components["schemas"];

export type SessionView = Schemas["WebSession"];
export type Verb = SessionView["verbs"][number];
export type Project = Schemas["ProjectList"]["projects"][number];
export type ThreadShell = Schemas["ThreadShell"];
/** A thread as a list row shows it (GET /threads?view=row); a shell has the same fields and more. */
export type ThreadRow = Schemas["ThreadRow"];
export type RunStatus = Schemas["Run"]["status"];
export type ThreadList = Schemas["ThreadList"];
/** A page of GET /threads?view=row: the threads as rows. */
export type ThreadRowList = Extract<ThreadList, { view: "row" }>;
export type ThreadRead = Schemas["ThreadRead"];
/** A page of GET /threads/search: a project's threads whose title or messages hold the words. */
export type ThreadSearch = Schemas["ThreadSearch"];
export type ThreadSearchHit = ThreadSearch["results"][number];
export type RunView = ThreadRead["runs"][number];
export type TimelineItem = ThreadRead["items"][number];
/** A provider-native sub-agent a thread's turn spawned: observed, no thread of its own. */
export type NativeSubagent = NonNullable<ThreadRead["nativeSubagents"]>[number];
/** One part of an item read whole (GET /threads/{threadId}/items/{itemId}). */
export type ThreadItemPart = Schemas["ThreadItemPart"];
export type PendingRequest = Schemas["PendingRequest"];
export type DelegatedTask = Schemas["DelegatedTask"];
/** A child a thread delegated to a linked environment; its thread lives there, not here. */
export type RemoteTask = Schemas["RemoteTasks"]["remoteTasks"][number];
/** GET /usage: a thread's tree, a project's root threads, or every project. */
export type Usage = Schemas["Usage"];
/** A thread's own usage and its whole tree's (GET /usage?threadId=). */
export type ThreadUsage = Extract<Usage, { scope: "thread" }>;
/** Usage totals: unknown is never shown as zero. */
export type UsageTotals = ThreadUsage["own"];
export type SendMode = NonNullable<Schemas["SendMessageBody"]["mode"]>;
export type SendResult = Schemas["SendResult"];
export type ProviderSummary = Schemas["ProviderSnapshot"]["providers"][number];
export type ProviderModel = ProviderSummary["models"][number];
export type CreatedThreads = Schemas["CreatedThreads"];
/** A profile a thread can start with (GET /profiles), and which providers can carry it. */
export type ProfileSummary = Schemas["ProfileList"]["profiles"][number];
export type AddedProject = Schemas["AddedProject"];
export type ProviderDoctor = Schemas["ProviderDoctor"];
export type ProviderFinding = ProviderDoctor["providers"][number];
export type FindingStatus = ProviderFinding["status"];
export type ForkResult = Schemas["ForkResult"];
/** A child's worktree or scratch folder and what it changed (GET /threads/{threadId}/changes). */
export type ChangeSet = Schemas["ChangeSet"];
/** What an apply or discard did, or that it is still going (a recorded apply waits out a lock). */
export type ChangeSetDecision = Schemas["ChangeSetDecision"];
/** A thread's own workspace (a delegated task's `changes`). */
export type WorkspaceView = ChangeSet["workspace"];
/** What became of an apply, discard or keep. */
export type WorkspaceOutcome = NonNullable<ChangeSetDecision["outcome"]>;
/** One frame of GET /events: a logged event, or (liveOutput=true) a piece of streamed text. */
export type StreamFrame = Schemas["StreamedEvent"];
/** One logged event (it has a sequence, its SSE id). */
export type StreamedEvent = Extract<StreamFrame, { sequence: number }>;
/** Streamed text not yet a complete item (no id; nothing stored). */
export type OutputDelta = Extract<StreamFrame, { type: "output.delta" }>;

/** A failed call, as the API answers it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }
}
