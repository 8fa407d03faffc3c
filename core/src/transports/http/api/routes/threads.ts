import { z } from "zod";
import { threadReference } from "../../../../contract/fields.js";
import { createThreadsAnswer, CreateThreadsInput, CreateThreadsOutput } from "../../../../contract/create-threads.js";
import { ThreadListAnswer, threadListAnswer, ThreadListQuery } from "../../../../contract/thread-list.js";
import { ThreadSearchInput, ThreadSearchOutput } from "../../../../contract/thread-search.js";
import { ThreadReadInput, ThreadReadOutput } from "../../../../contract/thread-read.js";
import { defineRoute } from "../api-route.js";

const ThreadPath = z.object({ threadId: threadReference("The thread") }).strict();

export const listThreadsRoute = defineRoute({
  method: "GET",
  path: "/threads",
  operationId: "listThreads",
  summary: "List a project's threads, newest first",
  description:
    "t3_thread_list: projectId is required (a token has no thread of its own). Filter by title, runStatus (repeat it or separate with commas), snoozed, settled and includeSubagents; offset-paginated. view=row answers each thread's row (ThreadRow) instead of its whole shell.",
  tag: "threads",
  requires: "orchestration:read",
  query: ThreadListQuery,
  input: ThreadListQuery,
  output: ThreadListAnswer,
  outputName: "ThreadList",
  handle: async (input, { caller, services }) =>
    threadListAnswer(await services.queries.list(caller, input), input.view),
});

export const searchThreadsRoute = defineRoute({
  method: "GET",
  path: "/threads/search",
  operationId: "searchThreads",
  summary: "Find a project's threads by words in their titles and messages",
  description:
    "Full-text search (SQLite FTS5) over thread titles and user and assistant messages, not tool output. Every word of q must match (the last also as a prefix); quotes, *, -, NEAR and the like are plain text. One result per thread with a snippet of its best match, best first (bm25), then most recently updated; offset-paginated, at most 50 a page. projectId is resolved and authorized as listThreads does it; deleted threads are never found.",
  tag: "threads",
  requires: "orchestration:read",
  query: ThreadSearchInput,
  input: ThreadSearchInput,
  output: ThreadSearchOutput,
  outputName: "ThreadSearch",
  handle: async (input, { caller, services }) => await services.queries.search(caller, input),
});

export const createThreadsRoute = defineRoute({
  method: "POST",
  path: "/threads",
  operationId: "createThreads",
  summary: "Create 1 to 20 threads in a project",
  description:
    "create_threads: each entry resolves its provider, model and modes; omitted modes are the token's ceiling (the broadest it may use), stepped down to what the provider offers, and nothing broader is accepted. Entries with a prompt start at once. Idempotency-Key (or clientRequestId) makes a retry return the same threads.",
  tag: "threads",
  requires: "orchestration:operate",
  // The whole create_threads input, passed through as it is: fields it gains reach the service unchanged.
  body: CreateThreadsInput,
  idempotencyKey: "clientRequestId",
  input: CreateThreadsInput,
  output: CreateThreadsOutput,
  outputName: "CreatedThreads",
  status: 201,
  handle: async (input, { caller, services }) =>
    createThreadsAnswer(await services.threads.createThreads(caller, input), services.queries),
});

export const readThreadRoute = defineRoute({
  method: "GET",
  path: "/threads/{threadId}",
  operationId: "readThread",
  summary: "Read a thread's state, recent runs and timeline",
  description:
    "t3_thread_read, with the same paging and bounds: without a cursor a token reads from the oldest item; afterPosition=nextPosition reads newer items, beforePosition=earlierPosition older ones. The result stays under maxChars (default 30000).",
  tag: "threads",
  requires: "orchestration:read",
  params: ThreadPath,
  query: ThreadReadInput.omit({ threadId: true }),
  input: ThreadReadInput,
  output: ThreadReadOutput,
  outputName: "ThreadRead",
  handle: async (input, { caller, services }) => await services.queries.read(caller, input),
});

export { ThreadPath };
