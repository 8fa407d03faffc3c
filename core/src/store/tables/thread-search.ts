import type { EventStore } from "../ports.js";
import { type SqliteEventStore, sqliteStoreOf } from "../sqlite-only.js";
import type { TableHost } from "../table-sql.js";
import { type SEARCHED_ITEM_KINDS, ThreadSearchIndex } from "../thread-search-index.js";
import type { TimelineItemKind } from "../records.js";
import type { ThreadListing } from "./threads.js";

/** Where a thread matched a search: its title, or one of its items (by kind). */
export type ThreadSearchSource = "title" | Extract<TimelineItemKind, (typeof SEARCHED_ITEM_KINDS)[number]>;

/** One thread a search found: its best match, with a few words around it. */
export interface ThreadSearchHit {
  readonly threadId: string;
  readonly matchedIn: ThreadSearchSource;
  /** The matching item's id and position (null for a title match). */
  readonly itemId: string | null;
  readonly position: number | null;
  /**
   * The words around the match; each matched term is wrapped in {@link SNIPPET_MATCH_START}
   * and {@link SNIPPET_MATCH_END}, characters no tokenizer keeps, for the caller to turn into
   * ranges (never markup: the text is the user's).
   */
  readonly snippet: string;
}

/** Marks the start of a matched term in a snippet (a control character: never part of a word). */
export const SNIPPET_MATCH_START = "\u0002";
/** Marks the end of a matched term in a snippet. */
export const SNIPPET_MATCH_END = "\u0003";

/** Tokens around a match a snippet shows (FTS5's limit is 64). */
const SNIPPET_TOKENS = 16;

/**
 * A title match counts this many times an item match of the same bm25 score: a title is short
 * and chosen to say what the thread is about.
 */
const TITLE_WEIGHT = 2;

/**
 * Turns what a person typed into an FTS5 query that treats every character as text: each
 * whitespace-separated word becomes a quoted phrase (its `"` doubled), so `NEAR`, `AND`, `-`,
 * `*`, `:` and `^` are words, not operators; all must match (implicit AND), and the last one
 * also matches as a prefix (search as you type). Words with no letter or digit would tokenize
 * to nothing (an empty phrase matches no row) and are left out. Null when nothing is left.
 */
export function ftsQuery(text: string): string | null {
  const words = text.split(/\s+/u).filter((word) => /[\p{L}\p{N}]/u.test(word));
  if (words.length === 0) return null;
  return words
    .map((word, index) => `"${word.replaceAll('"', '""')}"${index === words.length - 1 ? "*" : ""}`)
    .join(" ");
}

function listingWhere(listing: ThreadListing): string {
  return listing.includeSubagents
    ? "t.project_id = ? AND t.deleted = 0"
    : "t.project_id = ? AND t.deleted = 0 AND t.relationship != 'subagent'";
}

/**
 * Full-text search over a project's threads (SQLite only: on PostgreSQL it is refused with
 * `MissingStoreCapabilityError` until its `tsvector` index exists) (migration 31's FTS5 indexes of titles and message
 * text, kept from a watermark by ThreadSearchIndex). Deleted threads are never found: the live
 * threads are joined at query time, whatever the index still holds.
 */
export class ThreadSearchTable {
  private readonly store: SqliteEventStore;

  constructor(host: TableHost) {
    // The index (ThreadSearchIndex) is SQLite's FTS5, kept through the SQLite store itself.
    this.store = sqliteStoreOf(host as EventStore, "full-text thread search");
  }

  /**
   * A page of the threads matching an FTS5 query (from {@link ftsQuery}), best first: by bm25
   * of each thread's best match (a title's weighted up), then the most recently updated.
   * One row per thread, with its best match's snippet. The index first catches up with every
   * event committed before the call (usually one statement: nothing new).
   */
  async page(
    projectId: string,
    listing: ThreadListing,
    match: string,
    limit: number,
    offset: number,
  ): Promise<ThreadSearchHit[]> {
    await new ThreadSearchIndex(this.store).catchUpAsync();
    const sql = `
      WITH matches AS (
        SELECT t.id AS thread_id, t.updated_at AS updated_at, 'title' AS matched_in, NULL AS item_id, NULL AS position,
          bm25(thread_title_search) * ${TITLE_WEIGHT} AS rank,
          snippet(thread_title_search, 0, char(2), char(3), '…', ${SNIPPET_TOKENS}) AS snippet
        FROM thread_title_search JOIN threads t ON t.rowid = thread_title_search.rowid
        WHERE thread_title_search MATCH ? AND ${listingWhere(listing)}
        UNION ALL
        SELECT t.id, t.updated_at, i.kind, i.id, i.position,
          bm25(item_text_search),
          snippet(item_text_search, 0, char(2), char(3), '…', ${SNIPPET_TOKENS})
        FROM item_text_search
          JOIN items i ON i.rowid = item_text_search.rowid
          JOIN threads t ON t.id = i.thread_id
        WHERE item_text_search MATCH ? AND ${listingWhere(listing)}
      ),
      ranked AS (
        SELECT *, ROW_NUMBER() OVER (PARTITION BY thread_id ORDER BY rank, position) AS nth FROM matches
      )
      SELECT thread_id AS threadId, matched_in AS matchedIn, item_id AS itemId, position, snippet
      FROM ranked WHERE nth = 1
      ORDER BY rank, updated_at DESC, thread_id
      LIMIT ? OFFSET ?`;
    return this.store.statement(sql).all(match, projectId, match, projectId, limit, offset) as ThreadSearchHit[];
  }
}
