import { z } from "zod";
import { ThreadShell } from "./thread-shell.js";

/** The longest search a caller may send (characters). */
export const THREAD_SEARCH_MAX_QUERY_CHARS = 200;

/** The most threads one search page returns. */
export const THREAD_SEARCH_MAX_LIMIT = 50;

/** searchThreads: a project's threads whose title or messages hold every word of a query. */
export const ThreadSearchInput = z
  .object({
    projectId: z.string().min(1).optional(),
    q: z
      .string()
      .min(1)
      .max(THREAD_SEARCH_MAX_QUERY_CHARS)
      .describe(
        "Words to find, all of them, in a thread's title or its user and assistant messages (not tool output); the last word also matches as a prefix. Every character is text: quotes, *, -, NEAR and the like are not operators.",
      ),
    includeSubagents: z.boolean().optional(),
    limit: z.number().int().min(1).max(THREAD_SEARCH_MAX_LIMIT).optional(),
    offset: z.number().int().min(0).optional(),
  })
  .strict();

/** A range of a snippet's text that matched a word of the query. */
export const SnippetHighlight = z.object({ start: z.number(), end: z.number() });

export const ThreadSearchHit = z.object({
  thread: ThreadShell,
  matchedIn: z
    .enum(["title", "user_message", "assistant_message", "proposed_plan"])
    .describe("Where the thread's best match is: its title or one of its items."),
  itemId: z.string().nullable().describe("The matching item (null for a title match)."),
  position: z.number().nullable().describe("The matching item's position in the timeline (null for a title match)."),
  snippet: z.object({
    text: z.string().describe("A few words around the match, plain text ('…' where it was cut)."),
    highlights: z.array(SnippetHighlight).describe("Where in text the query's words matched, as [start, end) offsets."),
  }),
});

export const ThreadSearchOutput = z.object({
  projectId: z.string(),
  query: z.string(),
  results: z
    .array(ThreadSearchHit)
    .describe("Best match first (bm25; a title counts double), then most recently updated."),
  offset: z.number(),
  limit: z.number(),
  hasMore: z.boolean(),
  nextOffset: z.number().nullable(),
});
